/**
 * WebSocket sessions through the engine's settle: the ordering rule in the player (a replayed server message reaches
 * the client only once it is on the replay tape), and a fault rule that acts while recording (a relayed session closed
 * with the rule's code after N server messages, noted on the tape), as it does in replay.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createFaultPlan } from '../../../src/engine/faults/fault-plan.js';
import { parseFaultRule } from '../../../src/engine/faults/fault-rules.js';
import { startProxy } from '../../../src/front/server.js';
import { createLogger } from '../../../src/log.js';
import { createMemoryStore } from '../../../src/tape/stores/memory-store.js';
import { slowFrameStore } from '../../helpers/slow-frames.js';
import { startWsUpstream, type WsUpstream } from '../../helpers/ws-upstream.js';

const log = createLogger('silent');
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** An upstream that answers `go` with five numbered messages. */
async function counter(): Promise<WsUpstream> {
  const upstream = await startWsUpstream({
    message: (c) => {
      for (let n = 0; n < 5; n++) c.send({ n });
    },
  });
  stops.push(() => upstream.close());
  return upstream;
}

/** Opens a session, sends `go`, and collects what comes back (and when) until the session closes. */
async function talk(url: string): Promise<{ got: { n: number; at: number }[]; close: { code: number; reason: string } }> {
  const ws = new WebSocket(url);
  const got: { n: number; at: number }[] = [];
  ws.on('open', () => ws.send('go'));
  ws.on('message', (d: Buffer) => {
    got.push({ n: (JSON.parse(d.toString()) as { n: number }).n, at: performance.now() });
    if (got.length === 5) ws.close(1000);
  });
  const close = await new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return { got, close };
}

describe('WebSocket sessions settled by the engine', () => {
  it('replay: each server message reaches the client only once it is on the replay tape', async () => {
    const upstream = await counter();
    const store = createMemoryStore();
    const rec = await startProxy({
      mode: 'record',
      tape: 'count',
      store,
      port: 0,
      log,
      routes: [{ prefix: '/c', upstream: upstream.url }],
    });
    const recorded = await talk(`${rec.url.replace('http', 'ws')}/c/ws`);
    await rec.close();
    expect(recorded.got.map((g) => g.n)).toEqual([0, 1, 2, 3, 4]);

    const written = new Map<number, number>();
    const rep = await startProxy({
      mode: 'replay',
      tape: 'count',
      store: slowFrameStore(store, written),
      port: 0,
      log,
      routes: [],
      saveAs: 'count-replay',
    });
    const replayed = await talk(`${rep.url.replace('http', 'ws')}/c/ws`);
    await rep.close();
    expect(replayed.got.map((g) => g.n)).toEqual([0, 1, 2, 3, 4]);
    for (const g of replayed.got) expect(g.at).toBeGreaterThanOrEqual(written.get(g.n) ?? Infinity);
  });

  it('record: a close rule closes the relayed session after N server messages, and the tape notes the rule', async () => {
    const upstream = await counter();
    const store = createMemoryStore();
    const rule = parseFaultRule('{when: {route: /c}, then: {close: {code: 1011, reason: overloaded, afterMessages: 2}}}');
    const faults = createFaultPlan([rule]);
    const rec = await startProxy({
      mode: 'record',
      tape: 'closed',
      store,
      port: 0,
      log,
      routes: [{ prefix: '/c', upstream: upstream.url }],
      faults,
    });
    const { got, close } = await talk(`${rec.url.replace('http', 'ws')}/c/ws`);
    await rec.close();
    expect(got.map((g) => g.n)).toEqual([0, 1]);
    expect(close).toEqual({ code: 1011, reason: 'overloaded' });
    expect(faults.injected).toBe(1);
    const session = (await store.load('closed')).exchanges[0]!;
    expect(session.notes?.fault).toBe('#1 /c -> close 1011');
    expect(session.match).toBeUndefined();
    const server = session.websocket!.frames.filter((f) => f.from === 'server');
    expect(server.map((f) => f.kind)).toEqual(['text', 'text', 'close']);
    expect(server[2]).toMatchObject({ code: 1011, reason: 'overloaded' });
  });

  it('replay: a session refused at its upgrade (a miss) is not counted by a close rule; the next session is closed', async () => {
    const upstream = await counter();
    const store = createMemoryStore();
    const rec = await startProxy({
      mode: 'record',
      tape: 'count',
      store,
      port: 0,
      log,
      routes: [{ prefix: '/c', upstream: upstream.url }],
    });
    await talk(`${rec.url.replace('http', 'ws')}/c/ws`);
    await rec.close();

    const rule = parseFaultRule('{when: {route: /c, call: 1}, then: {close: {code: 4000, reason: first, afterMessages: 1}}}');
    const faults = createFaultPlan([rule]);
    const rep = await startProxy({ mode: 'replay', tape: 'count', store, port: 0, log, routes: [], saveAs: 'count-faulted', faults });
    const base = rep.url.replace('http', 'ws');
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${base}/c/elsewhere`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => undefined);
    });
    expect(refused).toBe(404);
    const { got, close } = await talk(`${base}/c/ws`);
    await rep.close();
    expect(got.map((g) => g.n)).toEqual([0]);
    expect(close).toEqual({ code: 4000, reason: 'first' });
    const out = await store.load('count-faulted');
    expect(out.exchanges.map((ex) => [ex.match?.kind, ex.notes?.fault])).toEqual([
      ['miss', undefined],
      ['exact', '#1 /c call 1 -> close 4000'],
    ]);
  });
});
