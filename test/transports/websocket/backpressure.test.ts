/**
 * A WebSocket peer that never reads: tapedeck pauses the side that sends once a bounded amount is held for the peer
 * (the sender then feels TCP's backpressure), instead of holding all of it, and everything flows, in order and on the
 * tape, once the peer reads again. Each direction, with real `ws` peers that pause their own socket.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from '../../../src/log.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startProxy } from '../../../src/front/server.js';
import { HIGH_WATER_BYTES } from '../../../src/transports/websocket/flow.js';
import { readTape } from '../../../src/tape/tape-reader.js';
import { startWsUpstream, type WsConnection } from '../../helpers/ws-upstream.js';

const MESSAGE = 64 * 1024;
/** What the sender tries to send: far more than tapedeck may hold plus what the kernel buffers on loopback. */
const TOTAL = 96 * 1024 * 1024;
const COUNT = TOTAL / MESSAGE;
/**
 * A hang guard, not a speed check: 96 MB through tapedeck and onto its tape takes ~15 s alone and several times that on
 * a loaded two-core machine (how fast it goes is the bench's).
 */
const HANG_GUARD = 240_000;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-backpressure-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A debug logger whose lines the test can wait for. */
function capturedLog(): { log: Logger; seen: (msg: string, direction: string) => Promise<void> } {
  const lines: { msg: string; direction?: string }[] = [];
  const waiting: (() => void)[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as { msg: string });
      for (const w of waiting.splice(0)) w();
      done();
    },
  });
  const log = pino({ level: 'debug' }, stream) as unknown as Logger;
  const seen = (msg: string, direction: string): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (lines.some((l) => l.msg === msg && l.direction === direction)) resolve();
        else waiting.push(check);
      };
      check();
    });
  return { log, seen };
}

/** Send COUNT numbered messages as a well-behaved sender does (only while its own socket takes them); counts them. */
function flood(ws: WebSocket): { sent: () => number } {
  let n = 0;
  const payload = randomBytes(MESSAGE);
  const next = (): void => {
    while (n < COUNT && ws.readyState === WebSocket.OPEN && ws.bufferedAmount < 1024 * 1024) {
      const m = Buffer.from(payload);
      m.writeUInt32BE(n++, 0);
      ws.send(m, { binary: true });
    }
    if (n < COUNT && ws.readyState === WebSocket.OPEN) setTimeout(next, 2);
  };
  next();
  return { sent: () => n };
}

/** Resolves once `sent()` has not moved for `quietMs` (the sender is held back), with its value. */
async function stalled(sent: () => number, quietMs = 300): Promise<number> {
  let last = -1;
  for (;;) {
    const now = sent();
    if (now === last || now === COUNT) return now;
    last = now;
    await new Promise((r) => setTimeout(r, quietMs));
  }
}

/** Every message, in order: the numbers 0..COUNT-1. */
function receiver(ws: WebSocket): Promise<number[]> {
  const got: number[] = [];
  return new Promise((resolve) =>
    ws.on('message', (d: Buffer) => {
      got.push(d.readUInt32BE(0));
      if (got.length === COUNT) resolve(got);
    }),
  );
}

const inOrder = Array.from({ length: COUNT }, (_, i) => i);

describe('a WebSocket peer that never reads', () => {
  it(
    'the client: tapedeck pauses the upstream, holds a bounded amount, and delivers everything once the client reads',
    async () => {
      let upstreamFlood: { sent: () => number } | undefined;
      const upstream = await startWsUpstream({ open: (c: WsConnection) => void (upstreamFlood = flood(c.ws)), message: () => undefined });
      const { log, seen } = capturedLog();
      const proxy = await startProxy({
        mode: 'record',
        tape: 'to-client',
        dir,
        port: 0,
        log,
        routes: [{ prefix: '/ws', upstream: upstream.url }],
      });
      const client = new WebSocket(`${proxy.url.replace('http', 'ws')}/ws/stream`);
      await new Promise((r) => client.once('open', r));
      client.pause();
      const all = receiver(client);

      // Without backpressure the sender sends all of it (tapedeck holds it); with it, the sender is held back.
      expect(await stalled(() => upstreamFlood!.sent())).toBeLessThan(COUNT);
      await seen('WebSocket backpressure: paused', 'server->client');
      const sent = await stalled(() => upstreamFlood!.sent());
      // What tapedeck may hold, plus what the kernel buffers on the way (both sockets, both ends; ~10 MB seen on Linux).
      expect(sent * MESSAGE).toBeLessThan(HIGH_WATER_BYTES + 40 * 1024 * 1024);

      client.resume();
      expect(await all).toEqual(inOrder);
      await seen('WebSocket backpressure: resumed', 'server->client');
      client.close();
      await new Promise((r) => client.once('close', r));
      await proxy.close();
      await upstream.close();
      const tape = await readTape(path.join(dir, 'to-client.jsonl'));
      expect(tape.exchanges[0]?.websocket?.frames.filter((f) => f.from === 'server' && f.kind === 'binary')).toHaveLength(COUNT);
    },
    HANG_GUARD,
  );

  it(
    'the upstream: tapedeck pauses the client, holds a bounded amount, and delivers everything once the upstream reads',
    async () => {
      let upstreamWs: WebSocket | undefined;
      let upstreamGot: Promise<number[]> | undefined;
      const upstream = await startWsUpstream({
        open: (c: WsConnection) => {
          upstreamWs = c.ws;
          c.ws.pause();
          upstreamGot = receiver(c.ws);
        },
        message: () => undefined,
      });
      const { log, seen } = capturedLog();
      const proxy = await startProxy({
        mode: 'record',
        tape: 'to-server',
        dir,
        port: 0,
        log,
        routes: [{ prefix: '/ws', upstream: upstream.url }],
      });
      const client = new WebSocket(`${proxy.url.replace('http', 'ws')}/ws/stream`);
      await new Promise((r) => client.once('open', r));
      const clientFlood = flood(client);

      // Without backpressure the sender sends all of it (tapedeck holds it); with it, the sender is held back.
      expect(await stalled(() => clientFlood.sent())).toBeLessThan(COUNT);
      await seen('WebSocket backpressure: paused', 'client->server');
      const sent = await stalled(() => clientFlood.sent());
      // What tapedeck may hold, plus what the kernel buffers on the way (both sockets, both ends; ~10 MB seen on Linux).
      expect(sent * MESSAGE).toBeLessThan(HIGH_WATER_BYTES + 40 * 1024 * 1024);

      upstreamWs!.resume();
      expect(await upstreamGot).toEqual(inOrder);
      client.close();
      await new Promise((r) => client.once('close', r));
      await proxy.close();
      await upstream.close();
      const tape = await readTape(path.join(dir, 'to-server.jsonl'));
      expect(tape.exchanges[0]?.websocket?.frames.filter((f) => f.from === 'client' && f.kind === 'binary')).toHaveLength(COUNT);
    },
    HANG_GUARD,
  );
});
