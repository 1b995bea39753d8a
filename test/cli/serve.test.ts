import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/tape/tape-reader.js';
import { runCli, spawnCli, waitForListening } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { lastUserText, openaiChat, openaiChatStream, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

let dir: string;
let upstream: ScriptedUpstream;
let release: () => void = () => undefined;

const post = (base: string, content: string, stream = false): Promise<Response> =>
  fetch(`${base}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-cli-SECRET' },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content }] }),
  });

async function waitForLines(file: string, n: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (existsSync(file) && readFileSync(file, 'utf8').split('\n').filter(Boolean).length >= n) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${file} never reached ${n} lines`);
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-cli-'));
  upstream = await startScriptedUpstream((req) => {
    const text = lastUserText(req.body);
    if (text === 'hold') return openaiChatStream({ parts: ['a', 'b'], gate: { after: 1, until: new Promise<void>((r) => (release = r)) } });
    return openaiChat({ content: `echo: ${text}` });
  });
});
afterAll(async () => {
  release();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tapedeck record / replay processes', () => {
  it('keeps every completed exchange readable after kill -9 mid-recording', async () => {
    const child = spawnCli(['record', '--tape', 'crash', '--dir', dir, '--port', '0', '--route', `/openai=${upstream.url}`]);
    const url = await waitForListening(child);
    for (let i = 0; i < 5; i++) expect((await post(url, `q${i}`)).status).toBe(200);
    const file = path.join(dir, 'crash.jsonl');
    await waitForLines(file, 6); // header + 5 exchanges
    // One more request is mid-stream (the upstream holds it open) when the process dies.
    const inflight = await post(url, 'hold', true);
    expect(inflight.status).toBe(200);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const tape = await readTape(file);
    expect(tape.exchanges.map((e) => lastUserText((e.request.body as { json: unknown }).json))).toEqual(['q0', 'q1', 'q2', 'q3', 'q4']);
    expect(tape.problems).toEqual([]);
  });

  it('finishes writing and exits 0 on SIGTERM, then replays from the tape', async () => {
    const child = spawnCli(['record', '--tape', 'term', '--dir', dir, '--port', '0', '--route', `/openai=${upstream.url}`]);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = await waitForListening(child);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await post(url, 'hello')).status).toBe(200);
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.once('exit', r));
    expect(code).toBe(0);
    expect(stderr).toContain('1 exchange(s) on tape "term"');

    const replay = spawnCli(['replay', '--tape', 'term', '--dir', dir, '--port', '0', '--save-as', 'term-run']);
    const replayUrl = await waitForListening(replay);
    const res = await post(replayUrl, 'hello');
    expect(res.headers.get('x-tapedeck-match')).toBe('exact');
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('echo: hello');
    replay.kill('SIGINT');
    expect(await new Promise((r) => replay.once('exit', r))).toBe(0);
    expect((await readTape(path.join(dir, 'term-run.jsonl'))).exchanges).toHaveLength(1);
    expect(readFileSync(path.join(dir, 'term.jsonl'), 'utf8')).not.toContain('sk-cli-SECRET');
  });

  it('rejects bad flags and config with one clear line and a non-zero exit', async () => {
    const cases: [string[], number, RegExp][] = [
      [['record', '--tape', 'x', '--bogus'], 2, /unknown flag --bogus \(record's flags: --tape, /],
      [['record'], 2, /a tape is required: tapedeck record NAME/],
      [['record', '--tape', 'x', '--port', 'abc'], 2, /--port must be a number/],
      [['record', '--tape', 'x', '--route', 'nourl'], 2, /--route must be PREFIX=URL/],
      [['replay', '--tape', 'x', '--on-miss', 'maybe'], 2, /--on-miss must be strict, lenient or live/],
      [['replay', '--tape', 'x', '--timing', 'fast'], 2, /--timing must be instant, recorded or a non-negative number/],
      [['replay', '--tape', 'does-not-exist', '--dir', dir, '--port', '0'], 2, /no tape "does-not-exist" in /],
      [['record', '--tape', 'x', '--config', '/nonexistent.yaml'], 2, /cannot read config file/],
      [['frobnicate'], 2, /unknown command "frobnicate"/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    for (const [i, [args, code, message]] of cases.entries()) {
      const res = results[i]!;
      expect(res.code, args.join(' ')).toBe(code);
      expect(res.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(res.stderr).toMatch(message);
    }
  });

  it('refuses to overwrite a tape unless told to: one line, exit 2 (a refusal, as the exit-code table says)', async () => {
    const res = await runCli(['record', '--tape', 'term', '--dir', dir, '--port', '0']);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/already exists.*--overwrite.*--append/);
    const wrapped = await runCli(['record', '--tape', 'term', '--dir', dir, '--', process.execPath, '-e', '']);
    expect(wrapped.code).toBe(2);
    expect(wrapped.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('takes a negative number as the value of a flag (--step -1)', async () => {
    const res = await runCliInProcess(['show', 'term', '--dir', dir, '--step', '-1']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^step 0 of 1/);
  });
});
