import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startProxy } from '../../../src/front/server.js';
import { createLogger } from '../../../src/log.js';
import { readTape } from '../../../src/tape/tape-reader.js';
import { realtimeScript, startWsUpstream, type WsUpstream } from '../../helpers/ws-upstream.js';
import { weatherAgent } from '../../helpers/realtime-agent.js';

let dir: string;
const log = createLogger('silent');
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Json = Record<string, unknown>;

/** Per-run values left out: what a client compares across runs. */
const stable = (events: Json[]): unknown[] =>
  events.map(
    (e) =>
      JSON.parse(
        JSON.stringify(e, (k, v: unknown) =>
          k === 'event_id' || (k === 'id' && typeof v === 'string' && v.startsWith('item_') && v.length > 30) ? '*' : v,
        ),
      ) as unknown,
  );

describe('WebSocket sessions: record, then replay with the upstream gone', () => {
  let upstream: WsUpstream;
  beforeAll(async () => {
    upstream = await startWsUpstream(realtimeScript());
  });
  afterAll(() => upstream.close());

  it('records a Realtime session with a function call round trip and replays it: same events, same order, no upstream', async () => {
    const rec = await startProxy({
      mode: 'record',
      tape: 'rt',
      dir,
      port: 0,
      log,
      routes: [{ prefix: '/openai', upstream: upstream.url }],
    });
    const recorded = await weatherAgent(`${rec.url.replace('http', 'ws')}/openai/v1/realtime?model=gpt-realtime`);
    await rec.close();
    expect(upstream.connections).toBe(1);
    expect(recorded.events.map((e) => e.type)).toContain('response.function_call_arguments.done');
    expect(recorded.close).toEqual({ code: 1000, reason: 'bye' });

    const tape = await readTape(path.join(dir, 'rt.jsonl'));
    expect(tape.header.format).toBe(2);
    const session = tape.exchanges[0]!;
    expect(session.transport).toBe('websocket');
    expect(session.request.query).toEqual([['model', 'gpt-realtime']]);
    expect(session.request.headers.authorization).toBe('[REDACTED]');
    expect(session.response?.headers['sec-websocket-protocol']).toBe('realtime');
    expect(session.error).toBeUndefined();
    const frames = session.websocket!.frames;
    expect(frames.filter((f) => f.from === 'server' && f.kind === 'text')).toHaveLength(recorded.events.length);
    expect(frames.at(-2)).toMatchObject({ from: 'client', kind: 'close', code: 1000, reason: 'bye' });

    const rep = await startProxy({ mode: 'replay', tape: 'rt', dir, port: 0, log, routes: [], saveAs: 'rt-replay' });
    const replayed = await weatherAgent(`${rep.url.replace('http', 'ws')}/openai/v1/realtime?model=gpt-realtime`);
    await rep.close();
    expect(upstream.connections).toBe(1);
    expect(stable(replayed.events)).toEqual(stable(recorded.events));

    const out = await readTape(path.join(dir, 'rt-replay.jsonl'));
    expect(out.exchanges[0]?.match).toMatchObject({ kind: 'exact', source: session.id, stage: 'session' });
    expect(out.exchanges[0]?.websocket?.frames.filter((f) => f.from === 'server').length).toBe(recorded.events.length);
  });

  it('carries a 1 MB binary message byte for byte through record and replay', async () => {
    const echo = await startWsUpstream({ message: (c, _m, raw, binary) => c.ws.send(Buffer.concat([raw, Buffer.from('!')]), { binary }) });
    const audio = randomBytes(1_000_000);
    const talk = async (url: string): Promise<Buffer> => {
      const ws = new WebSocket(url);
      await new Promise((r) => ws.once('open', r));
      const got = new Promise<Buffer>((resolve) => ws.once('message', (d: Buffer) => resolve(d)));
      ws.send(audio, { binary: true });
      const answer = await got;
      ws.close();
      await new Promise((r) => ws.once('close', r));
      return answer;
    };
    const rec = await startProxy({ mode: 'record', tape: 'audio', dir, port: 0, log, routes: [{ prefix: '/audio', upstream: echo.url }] });
    expect((await talk(`${rec.url.replace('http', 'ws')}/audio/stream`)).equals(Buffer.concat([audio, Buffer.from('!')]))).toBe(true);
    await rec.close();
    await echo.close();
    const rep = await startProxy({ mode: 'replay', tape: 'audio', dir, port: 0, log, routes: [], saveAs: 'audio-replay' });
    expect((await talk(`${rep.url.replace('http', 'ws')}/audio/stream`)).equals(Buffer.concat([audio, Buffer.from('!')]))).toBe(true);
    await rep.close();
    const tape = await readTape(path.join(dir, 'audio.jsonl'));
    expect(tape.exchanges[0]?.websocket?.frames.map((f) => [f.from, f.kind])).toEqual([
      ['client', 'binary'],
      ['server', 'binary'],
      ['client', 'close'],
      ['server', 'close'],
    ]);
  });
});

describe('WebSocket sessions under load and when things go wrong', () => {
  // 100 sessions at once is the concurrency that matters; 20 round trips each keep it from being a timing test on a
  // loaded machine (the volume belongs to bench/ws-memory.mjs).
  it('100 concurrent sessions of 20 messages each, recorded and replayed: none lost, none crossed', async () => {
    const echo = await startWsUpstream({
      message: (c, m) => c.send({ answer: m, at: (m as Json).n }),
    });
    const SESSIONS = 100;
    const MESSAGES = 20;
    const run = async (base: string, order: number[]): Promise<{ i: number; got: unknown[] }[]> =>
      Promise.all(
        order.map(
          (i) =>
            new Promise<{ i: number; got: unknown[] }>((resolve, reject) => {
              const ws = new WebSocket(`${base}/echo/ws`);
              const got: unknown[] = [];
              let n = 0;
              const next = (): void => ws.send(JSON.stringify({ session: i, n: n++, text: `message ${n} of session ${i}` }));
              ws.on('error', reject);
              ws.on('open', next);
              ws.on('message', (d) => {
                got.push(JSON.parse(d.toString()));
                if (n < MESSAGES) next();
                else ws.close();
              });
              ws.on('close', () => resolve({ i, got }));
            }),
        ),
      );
    const expected = (i: number): unknown[] =>
      Array.from({ length: MESSAGES }, (_, n) => ({ answer: { session: i, n, text: `message ${n + 1} of session ${i}` }, at: n }));
    const ids = Array.from({ length: SESSIONS }, (_, i) => i);
    const rec = await startProxy({ mode: 'record', tape: 'load', dir, port: 0, log, routes: [{ prefix: '/echo', upstream: echo.url }] });
    for (const r of await run(rec.url.replace('http', 'ws'), ids)) expect(r.got).toEqual(expected(r.i));
    await rec.close();
    await echo.close();
    const tape = await readTape(path.join(dir, 'load.jsonl'));
    expect(tape.exchanges).toHaveLength(SESSIONS);
    for (const ex of tape.exchanges) expect(ex.websocket?.frames.filter((f) => f.kind !== 'close')).toHaveLength(2 * MESSAGES);

    // Replayed in another order: each client is answered from its own recording.
    const rep = await startProxy({ mode: 'replay', tape: 'load', dir, port: 0, log, routes: [], saveAs: 'load-replay' });
    const shuffled = [...ids].sort(() => Math.random() - 0.5);
    for (const r of await run(rep.url.replace('http', 'ws'), shuffled)) expect(r.got).toEqual(expected(r.i));
    await rep.close();
    const out = await readTape(path.join(dir, 'load-replay.jsonl'));
    expect(out.exchanges.map((e) => e.match?.kind)).toEqual(Array(SESSIONS).fill('exact'));
  });

  it('a client message the recording does not have: the API error event, then (strict) a close that says why; lenient goes on', async () => {
    const upstream = await startWsUpstream(realtimeScript());
    const rec = await startProxy({
      mode: 'record',
      tape: 'miss',
      dir,
      port: 0,
      log,
      routes: [{ prefix: '/openai', upstream: upstream.url }],
    });
    await weatherAgent(`${rec.url.replace('http', 'ws')}/openai/v1/realtime?model=gpt-realtime`);
    await rec.close();
    await upstream.close();

    const talk = async (base: string): Promise<{ events: Json[]; close: [number, string] }> => {
      const ws = new WebSocket(`${base}/openai/v1/realtime?model=gpt-realtime`, 'realtime');
      const events: Json[] = [];
      ws.on('message', (d) => {
        const ev = JSON.parse(d.toString()) as Json;
        events.push(ev);
        if (ev.type === 'session.created')
          ws.send(JSON.stringify({ type: 'session.update', event_id: 'evt_x', session: { instructions: 'Be verbose.' } }));
        if (ev.type === 'error') setTimeout(() => ws.close(1000, 'client done'), 50);
      });
      const close = await new Promise<[number, string]>((resolve) => ws.on('close', (code, reason) => resolve([code, reason.toString()])));
      return { events, close };
    };
    const strict = await startProxy({ mode: 'replay', tape: 'miss', dir, port: 0, log, routes: [], saveAs: 'miss-strict' });
    const s = await talk(strict.url.replace('http', 'ws'));
    await strict.close();
    const error = s.events.find((e) => e.type === 'error');
    expect(error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'tapedeck_miss', event_id: 'evt_x' } });
    expect(String((error!.error as Json).message)).toMatch(
      /no recording on tape "miss" matches this message \(message 1 differs from recording #000000: session\.instructions: "Be verbose\.", recorded "Be brief\."/,
    );
    expect(s.close[0]).toBe(1008);
    expect(s.close[1]).toMatch(/^tapedeck replay miss: message 1 differs/);
    const st = await readTape(path.join(dir, 'miss-strict.jsonl'));
    expect(st.exchanges[0]?.match?.kind).toBe('miss');

    const lenient = await startProxy({
      mode: 'replay',
      tape: 'miss',
      dir,
      port: 0,
      log,
      routes: [],
      saveAs: 'miss-lenient',
      onMiss: 'lenient',
    });
    const l = await talk(lenient.url.replace('http', 'ws'));
    await lenient.close();
    expect(l.events.filter((e) => e.type === 'error')).toHaveLength(1);
    expect(l.close).toEqual([1000, 'client done']);

    // Nothing recorded where a client connects: refused like an HTTP miss, in the API's error shape.
    const none = await startProxy({ mode: 'replay', tape: 'miss', dir, port: 0, log, routes: [], saveAs: 'miss-none' });
    const refused = await new Promise<{ status: number; body: string }>((resolve) => {
      const ws = new WebSocket(`${none.url.replace('http', 'ws')}/openai/v1/realtime?model=gpt-other`);
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on('error', () => undefined);
    });
    await none.close();
    expect(refused.status).toBe(404);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { type: 'tapedeck_miss', code: 'tapedeck_miss' } });
  });
});

describe('modified replay of a Realtime session (--llm live --model ...)', () => {
  it('opens a live session with the model in its URL and the overrides in session.update; the replay tape says what changed', async () => {
    const upstream = await startWsUpstream(realtimeScript());
    const rec = await startProxy({
      mode: 'record',
      tape: 'mod',
      dir,
      port: 0,
      log,
      routes: [{ prefix: '/openai', upstream: upstream.url }],
    });
    await weatherAgent(`${rec.url.replace('http', 'ws')}/openai/v1/realtime?model=gpt-realtime`);
    await rec.close();
    const rep = await startProxy({
      mode: 'replay',
      tape: 'mod',
      dir,
      port: 0,
      log,
      routes: [],
      saveAs: 'mod-live',
      llm: 'live',
      sessionLive: (call) => (call.provider === 'openai' ? { model: 'gpt-realtime-mini', systemPrompt: 'Be terse.' } : undefined),
    });
    const live = await weatherAgent(`${rep.url.replace('http', 'ws')}/openai/v1/realtime?model=gpt-realtime`);
    await rep.close();
    await upstream.close();
    expect(upstream.connections).toBe(2);
    expect(live.events.filter((e) => e.type === 'response.done')).toHaveLength(2);
    const update = upstream.received.filter((m) => (m as Json).type === 'session.update').at(-1) as Json;
    expect((update.session as Json).instructions).toBe('Be terse.');
    const out = await readTape(path.join(dir, 'mod-live.jsonl'));
    const session = out.exchanges[0]!;
    expect(session.request.query).toEqual([['model', 'gpt-realtime-mini']]);
    expect(session.match).toMatchObject({ kind: 'live', reason: 'llm live with model, systemPrompt overridden' });
    expect(session.notes).toEqual({
      llm: 'live',
      overrides: { model: { from: 'gpt-realtime', to: 'gpt-realtime-mini' }, instructions: { from: 'Be brief.', to: 'Be terse.' } },
    });
  });
});
