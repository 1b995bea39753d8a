/**
 * `tapedeck drift` end to end, offline: agents (the OpenAI and Anthropic SDKs, the MCP SDK client) record through
 * the real proxy against a scripted LLM upstream and the real server-everything MCP server; then the upstream
 * changes (a renamed field, a new SSE event type, another answer, an error status, other tool arguments) and the
 * CLI's drift sends the tapes' calls again. Each change is classified as expected; an unchanged upstream and an
 * unchanged MCP server report no drift. The CLI runs in-process (test/helpers/cli-in-process.ts: the same dispatch,
 * flags and error lines), but for one run of the real process (a missing key: its exit status and stderr).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startProxy } from '../../src/front/server.js';
import { loadTape } from '../../src/tape/tape-reader.js';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import type { StoredBody } from '../../src/tape/store.js';
import { STREAMED_BODY_BYTES } from '../../src/tape/large-body.js';
import { runCli } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { startEverything, type EverythingServer } from '../helpers/everything-server.js';
import {
  anthropicStream,
  lastUserText,
  openaiChat,
  openaiChatStream,
  startScriptedUpstream,
  type Reply,
  type ScriptedUpstream,
  type SeenRequest,
} from '../helpers/scripted-upstream.js';

const log = createLogger('silent');
let dir: string;
let llm: ScriptedUpstream;
/** Another host a tape edited in a pull request could name: it must never get a key. */
let other: ScriptedUpstream;
const OTHER_SECRET = `sk-proj-${'Q7'.repeat(16)}`;
/** 20 KiB of an answer. */
const HUGE_PART = 'All work and no play. '.repeat(931);
/**
 * Parts of an answer just over what drift may hold (16 MiB, STREAMED_BODY_BYTES): the behaviour of an answer too large
 * to hold, at the least size that shows it (how fast a large one goes is bench/drift-large.mjs's, at 100 MB).
 */
const HUGE_PARTS = Math.ceil((STREAMED_BODY_BYTES + 1024 * 1024) / HUGE_PART.length);
let mcp: EverythingServer;
/** The upstream as it was when the tapes were recorded, and as it is today. */
let phase: 'record' | 'drift' = 'record';

const PARIS = 'The capital of France is Paris, on the Seine.';

/** What the scripted upstream answers per scenario (the user message names it) and phase. */
function script(scenario: string, req: SeenRequest): Reply {
  const today = phase === 'drift';
  switch (scenario) {
    case 'huge':
      // Today's answer is over 16 MiB: more than drift may hold.
      return openaiChat({ content: today ? HUGE_PART.repeat(HUGE_PARTS) : PARIS });
    case 'huge-stream':
      return openaiChatStream({ parts: today ? Array.from({ length: HUGE_PARTS }, () => HUGE_PART) : ['Paris', ' is the capital.'] });
    case 'echo':
      // An upstream that puts the key it was sent, and another key, in its error.
      return today
        ? {
            kind: 'json',
            status: 401,
            body: {
              error: {
                message: `Incorrect API key provided: ${String(req.headers.authorization)}; not ${OTHER_SECRET} either`,
                type: 'invalid_request_error',
              },
            },
          }
        : openaiChat({ content: PARIS });
    case 'renamed': {
      const reply = openaiChat({ content: PARIS }) as Extract<Reply, { kind: 'json' }>;
      if (!today) return reply;
      const { usage, ...body } = reply.body as { usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } };
      return {
        kind: 'json',
        body: {
          ...body,
          usage: { input_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens },
        },
      };
    }
    case 'stream-event': {
      const reply = anthropicStream({ parts: ['Paris', ' is the capital.'] }) as Extract<Reply, { kind: 'sse' }>;
      if (!today) return reply;
      const events = [...reply.events];
      events.splice(events.length - 2, 0, 'event: message_annotation\ndata: {"type":"message_annotation","note":"new"}');
      return { ...reply, events };
    }
    case 'answer':
      return openaiChat({ content: today ? 'Sorry, I cannot help with geography questions today.' : PARIS });
    case 'error':
      return today
        ? {
            kind: 'json',
            status: 404,
            body: { error: { message: 'The model gpt-4o-mini has been retired', type: 'invalid_request_error', code: 'model_not_found' } },
          }
        : openaiChat({ content: PARIS });
    case 'tools':
      return openaiChat({
        toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: JSON.stringify({ city: today ? 'Lyon' : 'Paris' }) }],
      });
    default:
      return openaiChat({ content: PARIS });
  }
}

async function recordTape(tape: string, run: (url: string) => Promise<void>): Promise<void> {
  const rec = await startProxy({
    mode: 'record',
    tape,
    dir,
    port: 0,
    routes: [
      { prefix: '/openai', upstream: llm.url },
      { prefix: '/anthropic', upstream: llm.url },
      { prefix: '/mcp', upstream: `${mcp.url}/mcp` },
    ],
    log,
  });
  try {
    await run(rec.url);
  } finally {
    await rec.close();
  }
}

const ask = async (url: string, scenario: string): Promise<void> => {
  const openai = new OpenAI({ apiKey: 'sk-recorded-key', baseURL: `${url}/openai/v1`, maxRetries: 0 });
  await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: scenario }] });
};

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-drift-'));
  llm = await startScriptedUpstream((req) => script(lastUserText(req.body), req));
  other = await startScriptedUpstream(() => openaiChat({ content: PARIS }));
  mcp = await startEverything('streamableHttp');
  for (const s of ['same', 'renamed', 'answer', 'error', 'tools', 'echo', 'huge']) await recordTape(s, (url) => ask(url, s));
  await recordTape('huge-stream', async (url) => {
    const openai = new OpenAI({ apiKey: 'sk-recorded-key', baseURL: `${url}/openai/v1`, maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'huge-stream' }],
    });
    for await (const chunk of stream) void chunk;
  });
  await recordTape('stream-event', async (url) => {
    const anthropic = new Anthropic({ apiKey: 'sk-ant-recorded', baseURL: `${url}/anthropic`, maxRetries: 0 });
    const stream = anthropic.messages.stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'stream-event' }],
    });
    await stream.finalMessage();
  });
  await recordTape('three', async (url) => {
    for (const s of ['same', 'same', 'same']) await ask(url, s);
  });
  await recordTape('mcp', async (url) => {
    const client = new Client({ name: 'agent', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    await client.listTools();
    await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
    await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    await client.close();
  });
  writeFileSync(
    path.join(dir, 'side_effects.yaml'),
    'tools:\n  echo: true\n  get-sum: true\n  toggle-simulated-logging: false\ndone: true\n',
  );
  phase = 'drift';
}, 90_000);

afterAll(async () => {
  await llm?.close();
  await other?.close();
  await mcp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const KEYS = { OPENAI_API_KEY: 'sk-drift-openai', ANTHROPIC_API_KEY: 'sk-ant-drift', ANTHROPIC_AUTH_TOKEN: '' };

interface Report {
  verdict: string;
  counts: Record<string, number>;
  calls: {
    step: number;
    call: string;
    verdict: string;
    findings: { severity: string; aspect: string; message: string }[];
    similarity: number | null;
  }[];
  skipped: { step: number; label: string; reason: string }[];
  hosts: { host: string; calls: number }[];
  refreshed: string | null;
}

async function drift(tape: string, ...flags: string[]): Promise<{ code: number | null; report: Report; stderr: string }> {
  // The tapes were recorded from a local upstream, not the providers' own APIs: the keys may go there when allowed.
  const res = await runCliInProcess(['drift', tape, '--dir', dir, '--json', '--allow-host', `127.0.0.1:${llm.port}`, ...flags], KEYS);
  if (res.stdout === '') throw new Error(res.stderr);
  return { code: res.code, report: JSON.parse(res.stdout) as Report, stderr: res.stderr };
}

describe('tapedeck drift', () => {
  it('an unchanged upstream: no drift, exit 0; the key comes from OPENAI_API_KEY, never from the tape', async () => {
    const before = llm.requests.length;
    const { code, report, stderr } = await drift('same');
    expect(code, stderr).toBe(0);
    expect(report.verdict).toBe('unchanged');
    expect(report.calls).toEqual([
      expect.objectContaining({ step: 0, call: 'LLM gpt-4o-mini', verdict: 'unchanged', findings: [], similarity: 1 }),
    ]);
    expect(report.hosts).toEqual([{ host: `127.0.0.1:${llm.port}`, calls: 1 }]);
    expect(llm.requests.length).toBe(before + 1);
    expect(llm.requests.at(-1)?.headers.authorization).toBe('Bearer sk-drift-openai');
    // the preflight, on stderr, before anything was sent
    // (prefixed `tapedeck: ` like every line tapedeck writes on stderr)
    expect(stderr).toMatch(/^tapedeck: drift "same": 1 call\(s\) to send \(1 LLM, 0 MCP\)$/m);
    expect(stderr).toMatch(new RegExp(`^tapedeck: {3}127\\.0\\.0\\.1:${llm.port} +1 call\\(s\\)$`, 'm'));
    expect(stderr).toMatch(/^tapedeck: {3}estimated cost +\$0\.\d+ \(the recorded usage at the price table's prices\)$/m);
  });

  it('a renamed field is breaking, named as a rename; exit 1', async () => {
    const { code, report, stderr } = await drift('renamed');
    expect(code).toBe(1);
    expect(stderr.trim().split('\n').at(-1)).toBe('tapedeck drift: breaking drift in 1 call(s) of "renamed"');
    expect(report.verdict).toBe('breaking');
    expect(report.calls[0]!.findings).toContainEqual({
      severity: 'breaking',
      aspect: 'shape',
      message: 'field usage.prompt_tokens is now usage.input_tokens (renamed?)',
    });
    // For people, at 50 columns: the finding's why wrapped under its step, never cut.
    const text = await runCliInProcess(['drift', 'renamed', '--dir', dir, '--width', '50'], KEYS);
    const lines = text.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('  step 0    LLM gpt-4o-mini: field'));
    expect(at, text.stdout).toBeGreaterThan(-1);
    const why = lines.slice(at, lines.indexOf('', at));
    for (const l of why) expect(l.length).toBeLessThanOrEqual(50);
    expect(why.map((l) => l.trim()).join(' ')).toBe(
      'step 0    LLM gpt-4o-mini: field usage.prompt_tokens is now usage.input_tokens (renamed?)',
    );
  });

  it('a new SSE event type is notable (exit 0; --fail-on notable exits 1); the Anthropic key goes where the SDK put it', async () => {
    const { code, report } = await drift('stream-event');
    expect(code).toBe(0);
    expect(report.verdict).toBe('notable');
    expect(report.calls[0]!.findings).toEqual([{ severity: 'notable', aspect: 'stream', message: 'new event type "message_annotation"' }]);
    expect(llm.requests.at(-1)?.headers.authorization).toBe('Bearer sk-ant-drift');
    expect((await drift('stream-event', '--fail-on', 'notable')).code).toBe(1);
  });

  it('another answer is notable, with its similarity', async () => {
    const { code, report } = await drift('answer');
    expect(code).toBe(0);
    expect(report.verdict).toBe('notable');
    const call = report.calls[0]!;
    expect(call.similarity).toBeLessThan(0.5);
    expect(call.findings[0]).toMatchObject({ severity: 'notable', aspect: 'answer' });
    expect(call.findings[0]!.message).toMatch(/^another answer \(similarity 0\.\d\d < 0\.5\): "Sorry, I cannot help/);
    // a looser threshold makes the same change noise
    expect((await drift('answer', '--min-similarity', '0')).report.verdict).toBe('noise');
  });

  it('an error status is breaking, with what the API said', async () => {
    const { code, report } = await drift('error');
    expect(code).toBe(1);
    expect(report.calls[0]!.findings).toEqual([
      { severity: 'breaking', aspect: 'status', message: 'HTTP 200 → 404: The model gpt-4o-mini has been retired' },
    ]);
  });

  it('other tool-call arguments are breaking', async () => {
    const { report } = await drift('tools');
    expect(report.verdict).toBe('breaking');
    expect(report.calls[0]!.findings).toContainEqual({
      severity: 'breaking',
      aspect: 'tools',
      message: 'other arguments for get_weather: {"city":"Lyon"}, was {"city":"Paris"}',
    });
  });

  it('MCP: the session is opened again, read-only methods and the tools the reviewed file marks safe are sent; side effects never', async () => {
    const none = await drift('mcp');
    expect(none.code, none.stderr).toBe(0);
    // without a side-effects file no tools/call is sent
    expect(none.report.calls.map((c) => c.call)).toEqual(['MCP initialize', 'MCP notifications/initialized', 'MCP tools/list']);
    expect(none.report.skipped.map((s) => s.reason)).toContain(
      'tool "echo" may have side effects: no reviewed side-effects file marks it safe (--side-effects FILE)',
    );

    const { code, report, stderr } = await drift('mcp', '--side-effects', path.join(dir, 'side_effects.yaml'));
    expect(code, stderr).toBe(0);
    expect(report.verdict).toBe('unchanged');
    expect(report.calls.map((c) => `${c.call}: ${c.verdict}`)).toEqual([
      'MCP initialize: unchanged',
      'MCP notifications/initialized: unchanged',
      'MCP tools/list: unchanged',
      'MCP tools/call echo: unchanged',
      'MCP tools/call get-sum: unchanged',
    ]);
    const toggle = report.skipped.find((s) => s.label === 'MCP tools/call toggle-simulated-logging');
    expect(toggle?.reason).toBe('a side effect: the side-effects file marks "toggle-simulated-logging" as one');
  });

  it('a missing key is one line naming the variable, exit 2, and nothing is sent', async () => {
    const before = llm.requests.length;
    const res = await runCli(['drift', 'same', '--dir', dir, '--allow-host', '127.0.0.1'], { OPENAI_API_KEY: '' });
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n').at(-1)).toBe(
      'tapedeck drift: drift needs OPENAI_API_KEY (1 call(s) on /openai): the tape holds no keys; set it in the environment, or name another variable with --key ROUTE=VAR',
    );
    expect(llm.requests.length).toBe(before);
    // --key names another variable for the route (given for this run: the key may go there)
    const other = await runCliInProcess(['drift', 'same', '--dir', dir, '--key', '/openai=MY_KEY', '--route', `/openai=${llm.url}`], {
      OPENAI_API_KEY: '',
      MY_KEY: 'sk-mine',
    });
    expect(other.code, other.stderr).toBe(0);
    expect(llm.requests.at(-1)?.headers.authorization).toBe('Bearer sk-mine');
  });

  it('--sample N sends N calls spread over the tape; --dry-run sends nothing', async () => {
    const { report } = await drift('three', '--sample', '2');
    expect(report.calls.map((c) => c.step)).toEqual([0, 2]);
    expect(report.skipped).toEqual([{ step: 1, label: 'LLM gpt-4o-mini', reason: 'not in the sample of 2' }]);
    const before = llm.requests.length;
    const dry = await runCliInProcess(['drift', 'three', '--dir', dir, '--dry-run'], { OPENAI_API_KEY: '' });
    expect(dry.code).toBe(0);
    expect(llm.requests.length).toBe(before);
    expect(dry.stdout.split('\n')[0]).toBe('drift "three": 3 call(s) to send (3 LLM, 0 MCP)');
  });

  it('--refresh --save-as writes the fresh answers as a tape, with no key on it', async () => {
    const { report } = await drift('renamed', '--refresh', '--save-as', 'renamed-today');
    expect(report.refreshed).toBe('renamed-today');
    const tape = await loadTape(dir, 'renamed-today');
    expect(tape.header.mode).toBe('record');
    expect(tape.exchanges).toHaveLength(1);
    const body = tape.exchanges[0]!.response?.body as { kind: string; json: { usage: Record<string, number> } };
    expect(Object.keys(body.json.usage)).toEqual(['input_tokens', 'completion_tokens', 'total_tokens']);
    expect(tape.exchanges[0]!.request.headers.authorization).toBe('[REDACTED]');
    expect(readFileSync(path.join(dir, 'renamed-today.jsonl'), 'utf8')).not.toContain('sk-drift');
    // the refreshed tape has drifted no more
    expect((await drift('renamed-today')).report.verdict).toBe('unchanged');
    // without --save-as the tape itself is refreshed
    expect((await drift('error', '--refresh')).report.refreshed).toBe('error');
    expect((await loadTape(dir, 'error')).exchanges[0]!.response?.status).toBe(404);
    expect((await drift('error')).report.verdict).toBe('unchanged');
    // an existing name is refused without --overwrite
    const again = await runCliInProcess(['drift', 'renamed', '--dir', dir, '--refresh', '--save-as', 'renamed-today'], KEYS);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/renamed-today/);
  });

  it('--markdown: the verdict first, a row per call, the changes folded', async () => {
    const res = await runCliInProcess(['drift', 'renamed', '--dir', dir, '--markdown'], KEYS);
    expect(res.code).toBe(1);
    const lines = res.stdout.split('\n');
    expect(lines[0]).toBe(
      '### ❌ tapedeck drift `renamed`: breaking drift in 1 call(s) sent (1 breaking, 0 notable, 0 noise, 0 unchanged)',
    );
    expect(lines[2]).toBe('**Fails:** breaking drift (the gate fails on breaking)');
    expect(lines).toContain('| step | call | verdict | status | answer | first change |');
    expect(lines).toContain(
      '| 0 | LLM gpt-4o-mini | ❌ breaking | 200 | 1.00 | field usage.prompt_tokens is now usage.input_tokens (renamed?) |',
    );
    expect(lines).toContain('<summary>breaking (1)</summary>');
  });

  it('prints for people: the verdict, a row per call, the changes by severity, what was not sent', async () => {
    const res = await runCliInProcess(['drift', 'mcp', '--dir', dir, '--side-effects', path.join(dir, 'side_effects.yaml')], KEYS);
    const tools = await runCliInProcess(['drift', 'tools', '--dir', dir], KEYS);
    expect(tools.code).toBe(1);
    const lines = tools.stdout.split('\n');
    expect(lines[0]).toBe(`drift on "tools": 1 call(s) sent to 127.0.0.1:${llm.port}`);
    expect(lines[1]).toBe('verdict  breaking  (1 breaking, 0 notable, 0 noise, 0 unchanged)  cost $0.0000');
    expect(tools.stdout).toMatch(
      /^ {2}0 {5}LLM gpt-4o-mini breaking {3}other arguments for get_weather: \{"city":"Lyon"\}, was \{"city":"P…$/m,
    );
    expect(tools.stdout).toMatch(
      /^breaking\n {2}step 0 {4}LLM gpt-4o-mini: other arguments for get_weather: \{"city":"Lyon"\}, was \{"city":"Paris"\}$/m,
    );
    expect(tools.stdout).not.toContain('\u001b[');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^verdict {2}no drift {2}\(0 breaking, 0 notable, 0 noise, 5 unchanged\)$/m);
    expect(res.stdout).toMatch(/^ {2}4 {5}MCP tools\/call echo +unchanged {2}-$/m);
    expect(res.stdout).toMatch(
      /^not sent\n {2}step 2 {4}MCP tapedeck\/stream: a server-to-client stream or reply, not a call\n {2}step 6 {4}MCP tools\/call toggle-simulated-logging: a side effect: the side-effects file marks/m,
    );
  });

  it('bad flags: one line, exit 2', async () => {
    for (const [flags, message] of [
      [['--fail-on', 'minor'], '--fail-on takes breaking, notable or noise (got "minor")'],
      [['--sample', '0'], '--sample needs a whole number of calls, 1 or more (got "0")'],
      [['--save-as', 'x'], '--save-as and --overwrite go with --refresh'],
      [['--refresh', '--sample', '1'], '--refresh writes every call afresh: not with --sample'],
      [['--key', 'openai'], '--key needs ROUTE=VAR, like /openai=MY_OPENAI_KEY (got "openai")'],
      [['--min-similarity', '2'], '--min-similarity needs a number from 0 to 1, got "2"'],
    ] as const) {
      const res = await runCliInProcess(['drift', 'same', '--dir', dir, ...flags], KEYS);
      expect(res.code).toBe(2);
      expect(res.stderr.trim()).toBe(`tapedeck drift: ${message}`);
    }
  }, 60_000);
});

describe('drift keeps keys where they belong', () => {
  const secrets = ['sk-drift-openai', OTHER_SECRET];
  const clean = (text: string): void => {
    for (const k of secrets) expect(text).not.toContain(k);
  };

  it('an upstream that echoes the key: not in --json, --markdown, the text report nor the refreshed tape', async () => {
    const allow = ['--allow-host', `127.0.0.1:${llm.port}`];
    const json = await runCliInProcess(['drift', 'echo', '--dir', dir, '--json', ...allow], KEYS);
    expect(llm.requests.at(-1)?.headers.authorization).toBe('Bearer sk-drift-openai');
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as Report;
    expect(report.calls[0]?.findings[0]?.message).toBe(
      'HTTP 200 → 401: Incorrect API key provided: Bearer [REDACTED]; not [REDACTED] either',
    );
    const markdown = await runCliInProcess(['drift', 'echo', '--dir', dir, '--markdown', ...allow], KEYS);
    expect(markdown.stdout).toContain('Incorrect API key provided: Bearer [REDACTED]');
    const text = await runCliInProcess(['drift', 'echo', '--dir', dir, '--wide', ...allow], KEYS);
    expect(text.stdout).toContain('Incorrect API key provided: Bearer [REDACTED]');
    const refreshed = await runCliInProcess(['drift', 'echo', '--dir', dir, '--refresh', '--save-as', 'echo-today', ...allow], KEYS);
    expect(refreshed.code).toBe(1);
    const tape = await loadTape(dir, 'echo-today');
    expect(JSON.stringify(tape.exchanges[0]?.response?.body)).toContain('Incorrect API key provided: Bearer [REDACTED]');
    for (const out of [json, markdown, text, refreshed]) clean(out.stdout + out.stderr);
    clean(readFileSync(path.join(dir, 'echo-today.jsonl'), 'utf8'));
  });

  /** The tape `from`, copied as `to` with `edit` applied to its text (what a pull request can do). */
  const edited = (from: string, to: string, edit: (text: string) => string): void =>
    writeFileSync(path.join(dir, `${to}.jsonl`), edit(readFileSync(path.join(dir, `${from}.jsonl`), 'utf8')));
  const otherGotKey = (): boolean => other.requests.some((r) => JSON.stringify(r.headers).includes('sk-drift'));

  it('a tape that names another upstream: the call goes without its key, and drift says so; --allow-host HOST sends it', async () => {
    edited('same', 'moved', (t) => t.replaceAll(llm.url, other.url));
    const before = other.requests.length;
    const { report, stderr } = await drift('moved');
    expect(other.requests.length).toBe(before + 1);
    expect(otherGotKey()).toBe(false);
    const host = `127.0.0.1:${other.port}`;
    expect((report as Report & { withheld: unknown }).withheld).toEqual([
      {
        route: '/openai',
        host,
        names: ['authorization'],
        reason: "not the provider's own API (https://api.openai.com) nor a route given for this run",
      },
    ]);
    expect(stderr).toContain(`tapedeck:   key not sent: authorization on /openai to ${host}: not the provider's own API`);
    expect(stderr).toContain(`(--route /openai=URL or --allow-host ${host} sends it)`);
    // Allowed by name, it goes.
    await drift('moved', '--allow-host', host);
    expect(other.requests.at(-1)?.headers.authorization).toBe('Bearer sk-drift-openai');
    other.requests.length = 0;
  });

  it('a host written before an @, a route renamed past a --route pin, a path that starts another host: no key', async () => {
    const host = `127.0.0.1:${other.port}`;
    // `http://127.0.0.1:LLM@127.0.0.1:OTHER`: it reads like the allowed host, and is the other one.
    edited('same', 'userinfo', (t) => t.replaceAll(llm.url, `http://127.0.0.1:${llm.port}@${host}`));
    // The user pins /openai; the tape moved its call to another route, with another upstream.
    edited('same', 'renamed-route', (t) => t.replaceAll('"/openai"', '"/elsewhere"').replaceAll(llm.url, other.url));
    // The upstream is the pinned one; the path joined to it makes another host.
    edited('same', 'path', (t) => t.replace('"path":"/v1/chat/completions"', `"path":"@${host}/v1/chat/completions"`));
    for (const [tape, flags] of [
      ['userinfo', []],
      ['renamed-route', ['--route', `/openai=${llm.url}`]],
      ['path', ['--route', `/openai=${llm.url}`]],
    ] as const) {
      const res = await runCliInProcess(['drift', tape, '--dir', dir, '--json', ...flags], KEYS);
      const report = JSON.parse(res.stdout) as Report & { withheld: { host: string }[] };
      expect(
        report.withheld.map((w) => w.host),
        tape,
      ).toEqual([host]);
      expect(otherGotKey(), tape).toBe(false);
    }
    expect(other.requests.length).toBeGreaterThan(0);
  });

  it('--allow-host takes a host or HOST:PORT, nothing else', async () => {
    for (const bad of ['https://evil.example', 'evil.example/path', 'user@evil.example']) {
      const res = await runCliInProcess(['drift', 'same', '--dir', dir, '--allow-host', bad], KEYS);
      expect(res.code).toBe(2);
      expect(res.stderr.trim()).toBe(`tapedeck drift: --allow-host needs a host or HOST:PORT, like api.groq.com (got "${bad}")`);
    }
  });
});

describe('an answer too large to hold', () => {
  it('a JSON answer over 16 MiB is kept apart as it streams, never parsed: said so, and refreshed byte for byte', async () => {
    const { report } = await drift('huge', '--refresh', '--save-as', 'huge-today');
    const call = report.calls[0]!;
    // Not read, so neither its text nor its tool calls are compared: only that it was not.
    expect(call.findings.filter((f) => f.aspect !== 'latency')).toEqual([
      {
        severity: 'noise',
        aspect: 'size',
        message: expect.stringMatching(
          /^the answer is \d+\.\d MB, was \d+(\.\d)? (bytes|KB): over 16 MiB, its fields are not compared$/,
        ) as string,
      },
    ]);
    const tape = await createDirStore(dir).load('huge-today', { resolveFiles: false });
    const body = tape.exchanges[0]?.response?.body;
    // Stored as the bytes it came as (text), not as JSON drift parsed.
    expect(body).toMatchObject({ kind: 'file', encoding: 'text' });
    const text = (await createDirStore(dir).readBlob('huge-today', body as StoredBody)).toString();
    expect((JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe(
      HUGE_PART.repeat(HUGE_PARTS),
    );
  }, 120_000);

  it('a stream over 16 MiB is kept apart event by event, its shape compared as it is read back, and refreshed', async () => {
    const { report } = await drift('huge-stream', '--refresh', '--save-as', 'huge-stream-today');
    const call = report.calls[0]!;
    expect(call.findings.filter((f) => f.aspect === 'stream' || f.aspect === 'shape')).toEqual([]);
    const tape = await createDirStore(dir).load('huge-stream-today', { resolveFiles: false });
    expect(tape.header.format).toBe(3);
    expect(tape.exchanges[0]?.response?.eventsFile).toMatchObject({ kind: 'file', events: HUGE_PARTS + 3 });
    expect(tape.exchanges[0]?.llm?.outputText).toBe(HUGE_PART.repeat(HUGE_PARTS));
    // The refreshed tape has drifted no more.
    expect((await drift('huge-stream-today')).report.verdict).toBe('unchanged');
  }, 120_000);

  it('--refresh over the tape itself keeps the large bodies of the calls it did not send', async () => {
    // huge-today, copied as `kept` with a plain HTTP call (never sent) holding the same large body.
    const text = readFileSync(path.join(dir, 'huge-today.jsonl'), 'utf8').replaceAll('huge-today.files/', 'kept.files/');
    const [header, line] = text.trim().split('\n') as [string, string];
    const plain = JSON.parse(line) as Record<string, unknown>;
    Object.assign(plain, {
      id: '000001',
      seq: 1,
      route: '/files',
      request: { ...(plain.request as object), method: 'GET', path: '/download' },
    });
    delete plain.llm;
    writeFileSync(path.join(dir, 'kept.jsonl'), `${header}\n${line}\n${JSON.stringify(plain)}\n`);
    cpSync(path.join(dir, 'huge-today.files'), path.join(dir, 'kept.files'), { recursive: true });
    const { report } = await drift('kept', '--refresh');
    expect(report.refreshed).toBe('kept');
    expect(report.skipped.map((s) => s.label)).toEqual(['HTTP GET /files/download']);
    const tape = await createDirStore(dir).load('kept', { inlineUpTo: 0 });
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges.map((e) => e.response?.body)).toEqual([
      expect.objectContaining({ kind: 'file', file: expect.stringMatching(/^kept\.files\//) as string }),
      expect.objectContaining({ kind: 'file', file: expect.stringMatching(/^kept\.files\//) as string }),
    ]);
  }, 60_000);
});
