/**
 * What `record`, `replay` and `serve` say when a run ends, with the official OpenAI SDK in wrapper mode and plain
 * requests in server mode: how each call was answered (from the tape, by similarity, missed, blocked, faults
 * injected), the first miss by its step, a fault named as injected by its rule (never blamed on the upstream), and a
 * replay no request reached naming no file it never wrote.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runToEnd, serveWhile, spawnCli, waitForListening } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { lastUserText, openaiChat, openaiChatStream, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const EXITED = `${process.execPath} exited with code 0`;
const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/agents/questions-agent.mjs');

let dir: string;
let upstream: ScriptedUpstream;

const replay = (tape: string, saveAs: string, env: Record<string, string>, ...flags: string[]) =>
  runToEnd(['replay', tape, '--dir', dir, '--save-as', saveAs, ...flags, '--', process.execPath, AGENT], env);

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-run-end-'));
  upstream = await startScriptedUpstream((req) => {
    const text = `You asked: ${lastUserText(req.body)}`;
    return (req.body as { stream?: boolean }).stream === true
      ? openaiChatStream({ parts: ['You ', 'asked: ', lastUserText(req.body)] })
      : openaiChat({ content: text });
  });
  for (const [tape, env] of [
    ['three', {}],
    ['streamed', { STREAM: '1' }],
  ] as const) {
    const rec = await runToEnd(['record', tape, '--dir', dir, '--route', `/openai=${upstream.url}`, '--', process.execPath, AGENT], env);
    if (rec.code !== 0) throw new Error(`record failed: ${rec.stderr}`);
    expect(rec.stderr).toContain(`tapedeck: 3 exchange(s) on tape "${tape}" (${path.join(dir, `${tape}.jsonl`)}); ${EXITED}`);
  }
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the end-of-run line of a replay', () => {
  it('counts a miss and names the first one by its step, though the agent exited 0', async () => {
    const rep = await replay('three', 'missed', { QUESTIONS: 'hello one,something else,another thing' });
    expect(rep.code).toBe(0);
    expect(rep.stdout).toContain('something else: error 404');
    expect(rep.stderr).toContain(
      `tapedeck: 3 exchange(s) on replay tape "missed" (${path.join(dir, 'missed.jsonl')}): 1 from the tape, 2 missed; ${EXITED}`,
    );
    expect(rep.stderr).toMatch(
      /tapedeck: first miss of 2: step 1, LLM gpt-4o-mini "something else": no recorded request has this exact key.* \(tapedeck show missed --step 1\)\n/,
    );
  });

  it('counts answers served by similarity', async () => {
    const rep = await replay('three', 'similar', { QUESTIONS: 'hello one,Hello two,hello three' });
    expect(rep.stdout).toContain('Hello two: You asked: hello two');
    expect(rep.stderr).toContain(`: 3 from the tape (1 by similarity); ${EXITED}`);
  });

  it('lists each answer served by similarity with --explain: the recording, the stage and score', async () => {
    const rep = await replay('three', 'explained', { QUESTIONS: 'hello one,Hello two,hello three' }, '--explain');
    expect(rep.stderr).toContain(`: 3 from the tape (1 by similarity); ${EXITED}`);
    expect(rep.stderr).toMatch(/tapedeck: 1 answer\(s\) served by similarity:\ntapedeck: {3}#\d+ <- #\d+ normalised 1\.00\n/);
    const plain = await replay('three', 'unexplained', { QUESTIONS: 'hello one,Hello two,hello three' });
    expect(plain.stderr).not.toContain('served by similarity:');
  });

  it('names an injected 429 as injected, by its rule, and never blames the upstream', async () => {
    const rule = '{when: {api: openai, call: 2}, then: {status: 429, retryAfter: 0}}';
    const rep = await replay('three', 'limited', { RETRIES: '1' }, '--fault', rule);
    expect(rep.stdout).toContain('hello two: You asked: hello two');
    expect(rep.stderr).toContain(`: 3 from the tape, 1 fault(s) injected; ${EXITED}`);
    expect(rep.stderr).toContain(
      "tapedeck: injected by tapedeck's fault rules, not by an upstream: HTTP 429 rate_limit_exceeded: Rate limit reached " +
        'for requests. Please try again later. for LLM gpt-4o-mini at step 1 (rule #1 openai call 2 -> 429)',
    );
    expect(rep.stderr).not.toContain('the upstream answered');
    expect(rep.stderr).not.toContain('on the tape:');
    // show: the step says what the client got, and that a rule injected it.
    const show = await runCliInProcess(['show', 'limited', '--dir', dir, '--wide']);
    const lines = show.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('!1 '));
    expect(lines[at]).toMatch(
      / LLM +\/openai gpt-4o-mini hello two → HTTP 429 rate_limit_exceeded: Rate limit reached for requests\. .* 429 fault$/,
    );
    expect(lines[at + 1]?.trim()).toBe(
      'injected by fault rule #1 openai call 2 -> 429: HTTP 429 rate_limit_exceeded: Rate limit reached for requests. Please try again later.',
    );
  });

  it('names a stream cut by a rule as cut by it, not as a recorded failure', async () => {
    const rule = '{when: {api: openai, call: 2}, then: {cut: {afterEvents: 2}}}';
    const rep = await replay('streamed', 'cut', { STREAM: '1' }, '--fault', rule);
    expect(rep.stderr).toContain(`: 3 from the tape, 1 fault(s) injected; ${EXITED}`);
    expect(rep.stderr).toContain(
      'the answer cut after 2 event(s) for LLM gpt-4o-mini at step 1 (rule #1 openai call 2 -> cut after 2 events)',
    );
    expect(rep.stderr).not.toContain('the recorded answer');
    // show: the cut step has the two events the client got, not the whole recorded answer.
    const show = await runCliInProcess(['show', 'cut', '--dir', dir, '--wide']);
    const lines = show.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('!1 '));
    expect(lines[at]).toMatch(/ hello two → You \(cut after 2 event\(s\)\) .* 200 exact$/);
    expect(lines[at + 1]?.trim()).toBe('injected by fault rule #1 openai call 2 -> cut after 2 events: FAULT_CUT: cut after 2 event(s)');
    const step = await runCliInProcess(['show', 'cut', '--dir', dir, '--step', '1', '--json']);
    const state = JSON.parse(step.stdout) as { conversation: { role: string; text: string }[]; step: { result: string } };
    expect(state.conversation.at(-1)).toEqual({ role: 'assistant', text: 'You ' });
    expect(state.step.result).toBe('You (cut after 2 event(s))');
  });

  it('a replay no request reached names no file: it writes none', async () => {
    const rep = await runToEnd(['replay', 'three', '--dir', dir, '--save-as', 'nobody', '--', process.execPath, '-e', '']);
    expect(rep.code).toBe(0);
    expect(rep.stderr).toContain(`tapedeck: no request reached the replay, so no replay tape was written; ${EXITED}`);
    expect(rep.stderr).not.toContain('nobody.jsonl');
    expect(existsSync(path.join(dir, 'nobody.jsonl'))).toBe(false);
  });

  it('server mode says the same when it stops', async () => {
    const child = spawnCli(['replay', 'three', '--dir', dir, '--port', '0', '--save-as', 'served']);
    onTestFinished(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = await waitForListening(child);
    const ask = (content: string): Promise<Response> =>
      fetch(`${url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
      });
    expect((await ask('hello one')).status).toBe(200);
    expect((await ask('not on the tape')).status).toBe(404);
    child.kill('SIGTERM');
    expect(await new Promise((resolve) => child.once('close', resolve))).toBe(0);
    expect(stderr).toContain(
      `tapedeck: 2 exchange(s) on replay tape "served" (${path.join(dir, 'served.jsonl')}): 1 from the tape, 1 missed\n`,
    );
    expect(stderr).toMatch(/tapedeck: miss: step 1, LLM gpt-4o-mini "not on the tape": no recorded request/);
  });
});

describe('the serve report', () => {
  it('a tape recorded with an injected fault says so, once, and the injected answer is no replay', async () => {
    const served = mkdtempSync(path.join(tmpdir(), 'tapedeck-run-end-serve-'));
    try {
      const rule = '{when: {api: openai, call: 2}, then: {status: 429, retryAfter: 0}}';
      const { code, stderr } = await serveWhile(served, ['--route', `/openai=${upstream.url}`, '--fault', rule], async (url) => {
        for (const content of ['hello one', 'hello two', 'hello two', 'hello three']) {
          await fetch(`${url}/@faulted/openai/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
          });
        }
      });
      expect(code).toBe(0);
      expect(stderr).toContain('tapedeck: 1 tape(s): 1 recorded, 0 replayed, 1 fault(s) injected');
      expect(stderr).toMatch(/tapedeck: {3}faulted {2}recorded 4 exchange\(s\); 1 fault\(s\) injected \(rule #1 openai call 2 -> 429\)\n/);
      expect(stderr).not.toContain('opened again');
    } finally {
      rmSync(served, { recursive: true, force: true });
    }
  });

  it('a replayed tape names its first miss and counts answers by similarity', async () => {
    const { stderr } = await serveWhile(dir, ['--mode', 'replay'], async (url) => {
      for (const content of ['hello one', 'Hello two', 'not on the tape'])
        await fetch(`${url}/@three/openai/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
        });
    });
    expect(stderr).toContain('tapedeck: 1 tape(s): 0 recorded, 1 replayed, 1 request(s) missed, 1 answer(s) by similarity');
    expect(stderr).toMatch(
      /tapedeck: {3}three {2}replayed 2 \(1 by similarity\), missed 1; first miss: LLM gpt-4o-mini "not on the tape": no recorded request has this exact key/,
    );
  });
});

describe('a fault that holds an answer back', () => {
  it('a delay of days (the longest a timer holds) is served as written, and does not hold a stop: SIGTERM ends the run', async () => {
    const rule = '{then: {delay: {betweenEventsMs: 2147483647}}}';
    const child = spawnCli(['replay', 'streamed', '--dir', dir, '--port', '0', '--save-as', 'held', '--fault', rule]);
    onTestFinished(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = await waitForListening(child);
    const abort = new AbortController();
    const res = await fetch(`${url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hello one' }] }),
      signal: abort.signal,
    });
    // The first event came; the next one is held back for 24.8 days.
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('data: ');
    child.kill('SIGTERM');
    // Without a delay that gives way, the process would wait for its timer (the test's own timeout ends it).
    expect(await new Promise((resolve) => child.once('close', resolve))).toBe(0);
    abort.abort();
    expect(stderr).toContain('tapedeck: 1 exchange(s) on replay tape "held"');
    expect(stderr).toContain('a delayed answer for LLM gpt-4o-mini at step 0 (rule #1 every call -> delay 2147483647ms between)');
  });
});
