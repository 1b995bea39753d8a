/**
 * Realtime agents with the official SDKs, run under tapedeck in wrapper mode: the Node `openai` SDK's
 * `OpenAIRealtimeWS` (which always opens `wss://`, so tapedeck's port must take TLS with its CA trusted through
 * NODE_EXTRA_CA_CERTS), `@google/genai`'s `ai.live.connect()` (`ws://` from an http base URL, JSON in binary
 * messages), and the Python `openai` realtime client where `websockets` is installed. Each is recorded against a
 * scripted upstream, then replayed with the upstream gone: the agent prints the same events in the same order.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../../src/tape/tape-reader.js';
import { runCli } from '../../helpers/cli.js';
import { geminiLiveScript, realtimeScript, startWsUpstream, type WsUpstream } from '../../helpers/ws-upstream.js';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');
let dir: string;
let env: NodeJS.ProcessEnv;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-sdk-'));
  env = { TAPEDECK_CA_DIR: path.join(dir, 'ca'), OPENAI_API_KEY: 'sk-test-realtime-key', GEMINI_API_KEY: 'test-gemini-key' };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (stdout: string): unknown[] =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);

describe('realtime SDKs under tapedeck (wrapper mode): recorded, then replayed with the upstream gone', () => {
  let openai: WsUpstream;
  let gemini: WsUpstream;
  beforeAll(async () => {
    openai = await startWsUpstream(realtimeScript());
    gemini = await startWsUpstream(geminiLiveScript());
  });
  afterAll(async () => {
    await openai.close();
    await gemini.close();
  });

  it('the Node openai SDK (OpenAIRealtimeWS over wss:// on the same port): text and a function call round trip', async () => {
    const agent = ['--', process.execPath, path.join(FIXTURES, 'realtime-agent.mjs')];
    const rec = await runCli(['record', '--tape', 'rt-sdk', '--dir', dir, '--route', `/openai=${openai.url}`, ...agent], env);
    expect(rec.code, rec.stderr).toBe(0);
    const recorded = lines(rec.stdout);
    expect(recorded.map((e) => (e as { type?: string }).type).filter((t) => t === 'response.done')).toHaveLength(2);
    expect(recorded).toContainEqual(expect.objectContaining({ type: 'response.output_text.done', text: 'It is sunny in Paris.' }));
    expect(recorded.at(-1)).toEqual({ closed: 1000, reason: 'done' });
    expect(openai.connections).toBe(1);
    // The key went upstream, not onto the tape.
    expect(openai.upgrades[0]?.authorization).toBe('Bearer sk-test-realtime-key');
    const tape = await readTape(path.join(dir, 'rt-sdk.jsonl'));
    expect(JSON.stringify(tape.exchanges)).not.toContain('sk-test-realtime-key');

    const rep = await runCli(['replay', '--tape', 'rt-sdk', '--dir', dir, '--save-as', 'rt-sdk-replay', ...agent], env);
    expect(rep.code, rep.stderr).toBe(0);
    expect(lines(rep.stdout)).toEqual(recorded);
    expect(openai.connections).toBe(1);
  });

  it('@google/genai ai.live.connect() (ws://, JSON in binary messages): a tool call and the answer', async () => {
    const agent = ['--', process.execPath, path.join(FIXTURES, 'live-agent.mjs')];
    const rec = await runCli(['record', '--tape', 'live-sdk', '--dir', dir, '--route', `/gemini=${gemini.url}`, ...agent], env);
    expect(rec.code, rec.stderr).toBe(0);
    const recorded = lines(rec.stdout);
    expect(recorded).toContainEqual(expect.objectContaining({ toolCall: expect.anything() }));
    expect(recorded).toContainEqual({ serverContent: { modelTurn: { parts: [{ text: 'ny in Paris.' }] } } });
    expect(gemini.connections).toBe(1);
    const setup = gemini.received[0] as { setup: { model: string } };
    expect(setup.setup.model).toBe('models/gemini-live-2.5-flash');
    const tape = await readTape(path.join(dir, 'live-sdk.jsonl'));
    const session = tape.exchanges[0]!;
    expect(session.request.path).toBe('/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent');
    expect(session.request.query).toEqual([['key', '[REDACTED]']]);
    // The server's JSON arrived in binary messages: stored as JSON, sent back as the same bytes.
    expect(session.websocket?.frames.find((f) => f.from === 'server')).toMatchObject({ kind: 'binary', data: { kind: 'json' } });

    const rep = await runCli(['replay', '--tape', 'live-sdk', '--dir', dir, '--save-as', 'live-sdk-replay', ...agent], env);
    expect(rep.code, rep.stderr).toBe(0);
    expect(lines(rep.stdout)).toEqual(recorded);
    expect(gemini.connections).toBe(1);
  });

  const python = spawnSync('python3', ['-c', 'import openai, websockets'], { encoding: 'utf8' });
  const note = python.status === 0 ? '' : ' (skipped: python3 cannot import openai and websockets; pip install "openai[realtime]")';
  it.skipIf(python.status !== 0)(`the Python openai realtime client (ws:// from an http base URL)${note}`, async () => {
    const agent = ['--', 'python3', path.join(FIXTURES, 'realtime_agent.py')];
    const rec = await runCli(['record', '--tape', 'rt-py', '--dir', dir, '--route', `/openai=${openai.url}`, ...agent], env);
    expect(rec.code, rec.stderr).toBe(0);
    const recorded = lines(rec.stdout);
    expect(recorded).toContainEqual(expect.objectContaining({ type: 'response.output_text.done', text: 'It is sunny in Paris.' }));
    const before = openai.connections;
    const rep = await runCli(['replay', '--tape', 'rt-py', '--dir', dir, '--save-as', 'rt-py-replay', ...agent], env);
    expect(rep.code, rep.stderr).toBe(0);
    expect(lines(rep.stdout)).toEqual(recorded);
    expect(openai.connections).toBe(before);
  });
});
