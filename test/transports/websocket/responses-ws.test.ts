/**
 * The OpenAI Responses API over WebSocket with the official Node SDK's `ResponsesWS` under tapedeck (wrapper mode):
 * recorded against a scripted upstream that speaks the protocol, then replayed with the upstream gone. Each
 * `response.create` is one Responses call: `show` lists it with its model and tools, `cost` counts its usage, `diff`
 * sees its tool calls; replay matches each one like an HTTP Responses call, so questions asked in another order get
 * their own answers and a changed question misses (the API's error event), never the next recorded events.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../../src/tape/tape-reader.js';
import { runCli } from '../../helpers/cli.js';
import { responsesWsScript, startWsUpstream, type WsUpstream } from '../../helpers/ws-upstream.js';

const AGENT = path.join(import.meta.dirname, 'fixtures', 'responses-ws-agent.mjs');
const KEY = 'sk-test-responses-ws-key';
let dir: string;
let env: NodeJS.ProcessEnv;
let upstream: WsUpstream;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-responses-ws-'));
  env = { TAPEDECK_CA_DIR: path.join(dir, 'ca'), OPENAI_API_KEY: KEY };
  upstream = await startWsUpstream(responsesWsScript());
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
const lines = (stdout: string): Json[] =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Json);
const agent = (...questions: string[]): string[] => ['--', process.execPath, AGENT, ...questions];
const texts = (events: Json[]): unknown[] => events.filter((e) => e.type === 'response.output_text.done').map((e) => e.text);

describe('Responses over WebSocket (ResponsesWS): recorded, then replayed with the upstream gone', () => {
  const WEATHER = 'What is the weather in Paris?';
  const HELLO = 'Say hello.';
  let recorded: Json[];

  beforeAll(async () => {
    const rec = await runCli(
      ['record', '--tape', 'rws', '--dir', dir, '--route', `/openai=${upstream.url}`, ...agent(WEATHER, HELLO)],
      env,
    );
    expect(rec.code, rec.stderr).toBe(0);
    recorded = lines(rec.stdout);
  });

  it('records the session: three responses, the key upstream and not on the tape, the close finished', async () => {
    expect(texts(recorded)).toEqual(['It is sunny in Paris.', `Answer to "${HELLO}".`]);
    expect(recorded.at(-1)).toEqual({ closed: 1000, reason: 'done' });
    expect(upstream.connections).toBe(1);
    expect(upstream.upgrades[0]?.authorization).toBe(`Bearer ${KEY}`);
    const tape = await readTape(path.join(dir, 'rws.jsonl'));
    expect(JSON.stringify(tape.exchanges)).not.toContain(KEY);
    const session = tape.exchanges[0]!;
    expect(session.request.path).toBe('/v1/responses');
    expect(session.error).toBeUndefined();
    const scan = await runCli(['scan', 'rws', '--dir', dir]);
    expect(scan.code, scan.stdout + scan.stderr).toBe(0);
  });

  it('an agent that exits as soon as it has asked to close: the session ends closed by the client, not cut by the stop', async () => {
    const rec = await runCli(['record', '--tape', 'rws-exit', '--dir', dir, '--route', `/openai=${upstream.url}`, ...agent(HELLO)], {
      ...env,
      EXIT_AT_ONCE: '1',
    });
    expect(rec.code, rec.stderr).toBe(0);
    const session = (await readTape(path.join(dir, 'rws-exit.jsonl'))).exchanges[0]!;
    expect(session.error).toBeUndefined();
    // The client's own close is on the tape; the upstream's answers it, or tapedeck's 1001 when the stop came first.
    const closes = session.websocket?.frames.filter((f) => f.kind === 'close').map((f) => [f.from, f.code]);
    expect(closes?.[0]).toEqual(['client', 1000]);
    expect(closes?.map(([from]) => from)).toEqual(['client', 'server']);
  });

  it('show lists each response as a step with its model and tools; cost counts their usage', async () => {
    const show = await runCli(['show', 'rws', '--dir', dir, '--json']);
    expect(show.code, show.stderr).toBe(0);
    const steps = (JSON.parse(show.stdout) as { steps: Json[] }).steps.filter((s) => s.kind === 'LLM');
    expect(steps.map((s) => [s.target, s.args, s.result])).toEqual([
      ['gpt-4.1-mini', WEATHER, 'get_weather({"city":"Paris"})'],
      ['gpt-4.1-mini', '', 'It is sunny in Paris.'],
      ['gpt-4.1-mini', HELLO, `Answer to "${HELLO}".`],
    ]);
    const text = await runCli(['show', 'rws', '--dir', dir]);
    expect(text.stdout).toMatch(/LLM +\/openai gpt-4\.1-mini +What is the weather in Paris\? → get_weather/);
    const cost = await runCli(['cost', 'rws', '--dir', dir, '--json']);
    expect(cost.code, cost.stderr).toBe(0);
    const calls = (JSON.parse(cost.stdout) as { calls: { model: string; tokens: { input: number; output: number } }[] }).calls;
    expect(calls.map((c) => [c.model, c.tokens.input, c.tokens.output])).toEqual([
      ['gpt-4.1-mini', 40, 12],
      ['gpt-4.1-mini', 30, 7],
      ['gpt-4.1-mini', 30, 7],
    ]);
  });

  it('replays with 0 upstream hits: the same events; diff against the recording sees the same tool calls', async () => {
    const before = upstream.connections;
    const rep = await runCli(['replay', '--tape', 'rws', '--dir', dir, '--save-as', 'rws-replay', ...agent(WEATHER, HELLO)], env);
    expect(rep.code, rep.stderr).toBe(0);
    expect(lines(rep.stdout)).toEqual(recorded);
    expect(upstream.connections).toBe(before);
    const diff = await runCli(['diff', 'rws', 'rws-replay', '--dir', dir]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toMatch(/get_weather\(\{"city":"Paris"\}\) +get_weather\(\{"city":"Paris"\}\)/);
    expect(diff.stdout).toContain('same calls, same order, same arguments');
  });

  it('modified replay (--llm live --model): each response.create goes live with the model changed', async () => {
    const before = upstream.received.length;
    const rep = await runCli(
      ['replay', '--tape', 'rws', '--dir', dir, '--save-as', 'rws-live', '--llm', 'live', '--model', 'gpt-4.1', ...agent(HELLO)],
      env,
    );
    expect(rep.code, rep.stderr).toBe(0);
    expect(texts(lines(rep.stdout))).toEqual([`Answer to "${HELLO}".`]);
    expect(upstream.received.slice(before)).toEqual([expect.objectContaining({ type: 'response.create', model: 'gpt-4.1' })]);
    const session = (await readTape(path.join(dir, 'rws-live.jsonl'))).exchanges[0]!;
    expect(session.notes?.overrides).toEqual({ model: { from: 'gpt-4.1-mini', to: 'gpt-4.1' } });
  });

  it('questions asked in another order get their own answers', async () => {
    const before = upstream.connections;
    const rep = await runCli(['replay', '--tape', 'rws', '--dir', dir, '--save-as', 'rws-order', ...agent(HELLO, WEATHER)], env);
    expect(rep.code, rep.stderr).toBe(0);
    expect(texts(lines(rep.stdout))).toEqual([`Answer to "${HELLO}".`, 'It is sunny in Paris.']);
    expect(upstream.connections).toBe(before);
  });

  it('a changed question misses with the API error event, reported as a miss, never the next recorded answer', async () => {
    const before = upstream.connections;
    const rep = await runCli(
      [
        'replay',
        '--tape',
        'rws',
        '--dir',
        dir,
        '--save-as',
        'rws-miss',
        '--on-miss',
        'lenient',
        ...agent(WEATHER, 'Write a poem about the sea.'),
      ],
      env,
    );
    const out = lines(rep.stdout);
    expect(texts(out)).toEqual(['It is sunny in Paris.']);
    expect(out).toContainEqual({ error: expect.stringMatching(/tapedeck_miss|no recording/) });
    expect(upstream.connections).toBe(before);
    const tape = await readTape(path.join(dir, 'rws-miss.jsonl'));
    const session = tape.exchanges[0]!;
    expect(session.match?.kind).toBe('miss');
    // Each call says how it was matched: the first exactly (recording 000000.1 and its tool call's follow-up), the poem not at all.
    const calls = session.notes?.calls as { kind: string; source?: string; reason?: string }[];
    expect(calls.map((c) => [c.kind, c.source])).toEqual([
      ['exact', '000000.1'],
      ['exact', '000000.2'],
      ['miss', undefined],
    ]);
    expect(calls[2]?.reason).toMatch(/no recorded response matches this response\.create/);
    const show = await runCli(['show', 'rws-miss', '--dir', dir, '--json']);
    const steps = (JSON.parse(show.stdout) as { steps: { kind: string; match: string | null }[] }).steps.filter((s) => s.kind === 'LLM');
    expect(steps.map((s) => s.match)).toEqual([
      expect.stringMatching(/^exact/),
      expect.stringMatching(/^exact/),
      expect.stringMatching(/^miss/),
    ]);
  });

  it('a question worded a little differently is matched semantically and gets its recorded answer', async () => {
    const before = upstream.connections;
    const rep = await runCli(['replay', '--tape', 'rws', '--dir', dir, '--save-as', 'rws-semantic', ...agent(HELLO.toLowerCase())], env);
    expect(rep.code, rep.stderr).toBe(0);
    expect(texts(lines(rep.stdout))).toEqual([`Answer to "${HELLO}".`]);
    expect(upstream.connections).toBe(before);
    const tape = await readTape(path.join(dir, 'rws-semantic.jsonl'));
    expect(tape.exchanges[0]?.notes?.calls).toEqual([expect.objectContaining({ kind: 'semantic', source: '000000.3' })]);
  });
});

const python = spawnSync(
  'python3',
  ['-c', 'from openai import OpenAI; import websockets; OpenAI.responses; OpenAI(api_key="x").responses.connect'],
  { encoding: 'utf8' },
);
const pyNote =
  python.status === 0
    ? ''
    : ' (skipped: python3 cannot import openai >= 2.x with responses.connect and websockets; pip install "openai[realtime]")';
describe.skipIf(python.status !== 0)(`the Python openai client's responses.connect()${pyNote}`, () => {
  it('records and replays the same events with 0 upstream hits; another order gets its own answers', async () => {
    const py = (...questions: string[]): string[] => [
      '--',
      'python3',
      path.join(import.meta.dirname, 'fixtures', 'responses_ws_agent.py'),
      ...questions,
    ];
    const rec = await runCli(
      [
        'record',
        '--tape',
        'rws-py',
        '--dir',
        dir,
        '--route',
        `/openai=${upstream.url}`,
        ...py('What is the weather in Paris?', 'Say hello.'),
      ],
      env,
    );
    expect(rec.code, rec.stderr).toBe(0);
    const recorded = lines(rec.stdout);
    expect(texts(recorded)).toEqual(['It is sunny in Paris.', 'Answer to "Say hello.".']);
    const before = upstream.connections;
    const rep = await runCli(
      ['replay', '--tape', 'rws-py', '--dir', dir, '--save-as', 'rws-py-replay', ...py('What is the weather in Paris?', 'Say hello.')],
      env,
    );
    expect(rep.code, rep.stderr).toBe(0);
    expect(lines(rep.stdout)).toEqual(recorded);
    const order = await runCli(
      ['replay', '--tape', 'rws-py', '--dir', dir, '--save-as', 'rws-py-order', ...py('Say hello.', 'What is the weather in Paris?')],
      env,
    );
    expect(order.code, order.stderr).toBe(0);
    expect(texts(lines(order.stdout))).toEqual(['Answer to "Say hello.".', 'It is sunny in Paris.']);
    expect(upstream.connections).toBe(before);
    const scan = await runCli(['scan', 'rws-py', '--dir', dir]);
    expect(scan.code, scan.stdout + scan.stderr).toBe(0);
  });
});
