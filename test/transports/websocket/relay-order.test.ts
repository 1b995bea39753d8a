/**
 * The relay's promise behind the kill -9 test, checked directly: a server message reaches the client only after it
 * is on the tape. The tape here is slow on purpose (each write resolves 30 ms late); the client must see every
 * message after its write, and in order.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createLogger } from '../../../src/log.js';
import { createClientServer } from '../../../src/transports/websocket/client-server.js';
import { relaySession } from '../../../src/transports/websocket/relay.js';
import { decideSession, liveAsAsked, type LiveDecision } from '../../../src/transports/websocket/ws-settle.js';
import type { WsUpgrade } from '../../../src/transports/websocket/types.js';
import { createExchangeLog } from '../../../src/engine/exchange-log.js';
import { createMemoryStore } from '../../../src/tape/stores/memory-store.js';
import { slowFrameWriter } from '../../helpers/slow-frames.js';
import { startWsUpstream } from '../../helpers/ws-upstream.js';

it('sends each server message to the client only once it is on the tape', async () => {
  const upstream = await startWsUpstream({
    message: (c) => {
      for (let n = 0; n < 5; n++) c.send({ n });
    },
  });
  const real = await createMemoryStore().openWriter({ name: 'slow', header: { mode: 'record', routes: [] } });
  const written = new Map<number, number>();
  const writer = slowFrameWriter(real, written);
  const wss = createClientServer();
  const server = createServer();
  const log = createLogger('silent');
  const settle = { log: createExchangeLog(writer, log), onTapeFailure: 'refuse' as const };
  server.on('upgrade', (req, socket, head) => {
    const up: WsUpgrade = {
      route: { prefix: '/x', upstream: upstream.url },
      path: '/',
      query: [],
      headers: {},
      startedAt: new Date(),
      offsetMs: 0,
      t0: performance.now(),
      req,
      socket,
      head,
    };
    void decideSession(up, settle, { route: '/x' }, () => liveAsAsked(up)).then((d) =>
      relaySession(
        up,
        { ...d, decision: d.decision as LiveDecision },
        { settle, wss, log, handshakeMs: 5000, register: () => () => undefined },
      ),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
  const got: { n: number; at: number }[] = [];
  await new Promise<void>((resolve) => {
    ws.on('open', () => ws.send('go'));
    ws.on('message', (d) => {
      got.push({ n: (JSON.parse(d.toString()) as { n: number }).n, at: performance.now() });
      if (got.length === 5) resolve();
    });
  });
  ws.close();
  expect(got.map((g) => g.n)).toEqual([0, 1, 2, 3, 4]);
  for (const g of got) expect(g.at).toBeGreaterThanOrEqual(written.get(g.n) ?? Infinity);
  await new Promise((r) => ws.once('close', r));
  server.close();
  await upstream.close();
});
