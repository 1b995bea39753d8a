import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startProxy } from '../../../src/proxy/server.js';
import { createLogger } from '../../../src/log.js';
import { readTape } from '../../../src/tape/tape-reader.js';
import { realtimeScript, startWsUpstream, type WsUpstream } from '../../helpers/ws-upstream.js';

let dir: string;
const log = createLogger('silent');
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Json = Record<string, unknown>;

/** An agent on the Realtime API with a plain `ws` client: asks about the weather, runs the tool, sends the output back. */
async function weatherAgent(url: string): Promise<{ events: Json[]; close: { code: number; reason: string } }> {
  const ws = new WebSocket(url, 'realtime', { headers: { authorization: 'Bearer sk-test-SECRET-KEY' } });
  const events: Json[] = [];
  // Ids the client makes up differ every run, as they would.
  const userItem = `item_${randomUUID()}`;
  const send = (ev: Json): void => ws.send(JSON.stringify({ event_id: `event_${randomUUID()}`, ...ev }));
  const close = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  let done = 0;
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('message', (data) => {
      const ev = JSON.parse(data.toString()) as Json;
      events.push(ev);
      if (ev.type === 'session.created') {
        send({ type: 'session.update', session: { instructions: 'Be brief.', tools: [{ type: 'function', name: 'get_weather' }] } });
        send({
          type: 'conversation.item.create',
          item: { id: userItem, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is the weather?' }] },
        });
        send({ type: 'response.create' });
      }
      if (ev.type === 'conversation.item.created' && (ev.item as Json).role === 'user') expect((ev.item as Json).id).toBe(userItem);
      if (ev.type === 'response.done') {
        const call = ((ev.response as Json).output as Json[]).find((o) => o.type === 'function_call');
        if (call !== undefined) {
          send({
            type: 'conversation.item.create',
            previous_item_id: userItem,
            item: { type: 'function_call_output', call_id: call.call_id, output: '{"sky":"sunny"}' },
          });
          send({ type: 'response.create' });
        } else if (++done === 1) {
          ws.close(1000, 'bye');
          resolve();
        }
      }
    });
  });
  return { events, close: await close };
}

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
