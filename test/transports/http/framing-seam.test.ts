/**
 * A framing registered alone (the tests' line framing, `test/tape/lines-framing.ts`, as a provider would add NDJSON)
 * goes through the whole proxy as SSE does: recorded event by event with offsets, replayed byte for byte (instantly
 * and with its recorded gaps), cut after N events by a fault, and stored apart in a side file when it is large, then
 * served from it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../../../src/engine/faults/fault-plan.js';
import { parseFaultRule } from '../../../src/engine/faults/fault-rules.js';
import { startProxy } from '../../../src/front/server.js';
import { createBodySpill } from '../../../src/http/body-spill.js';
import { BufferSink } from '../../../src/http/sink.js';
import type { ProxyRequest } from '../../../src/http/types.js';
import { createLogger } from '../../../src/log.js';
import { registerFraming } from '../../../src/tape/framing/registry.js';
import { createDirStore } from '../../../src/tape/stores/dir-store.js';
import { createMemoryStore } from '../../../src/tape/stores/memory-store.js';
import { serveRecorded } from '../../../src/transports/http/serve-recorded.js';
import { forwardAndCapture } from '../../../src/upstream/forward.js';
import { exchangeRecord } from '../../../src/engine/record.js';
import { httpCall } from '../../../src/http/http-call.js';
import { LINES_TYPE, linesFraming } from '../../tape/lines-framing.js';
import { startLocalServer, type LocalServer } from '../../helpers/local-server.js';

const log = createLogger('silent');
const LINES = ['{"n":1,"text":"one"}', '{"n":2,"text":"ça"}', '{"n":3,"text":"😀"}', '{"done":true}'];
const WIRE = LINES.map((l) => `${l}\n`).join('');
let dir: string;
let server: LocalServer;
let upstream: string;
let unregister: () => void;

beforeAll(async () => {
  unregister = registerFraming(linesFraming);
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-framing-'));
  // Each line in a write of its own, a few ms apart; a line split across two writes in the middle.
  server = await startLocalServer((req, res) => {
    res.writeHead(200, { 'content-type': LINES_TYPE });
    const pieces = [LINES[0] + '\n', LINES[1]!.slice(0, 5), LINES[1]!.slice(5) + '\n', LINES[2] + '\n', LINES[3] + '\n'];
    let i = 0;
    const next = (): void => {
      if (i === pieces.length) return void res.end();
      res.write(pieces[i++]);
      setTimeout(next, 5);
    };
    next();
  });
  upstream = server.url;
});
afterAll(async () => {
  unregister();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(url: string): Promise<{ status: number; text: string; cut: boolean }> {
  try {
    const res = await fetch(url);
    const text = await res.text();
    return { status: res.status, text, cut: false };
  } catch {
    return { status: 0, text: '', cut: true };
  }
}

/** What a client reads of `url` before the connection ends or breaks. */
async function readUntilEnd(url: string): Promise<{ text: string; cut: boolean }> {
  const res = await fetch(url);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, cut: false };
      text += Buffer.from(value).toString();
    }
  } catch {
    return { text, cut: true };
  }
}

describe('a framing a provider registers, through the proxy', () => {
  it('is recorded event by event, replayed byte for byte (with its gaps too), and cut by a fault after N events', async () => {
    const routes = [{ prefix: '/lines', upstream }];
    const rec = await startProxy({ mode: 'record', tape: 'lines', dir, port: 0, log, routes });
    const live = await get(`${rec.url}/lines/stream`);
    await rec.close();
    expect(live.text).toBe(WIRE);

    const tape = await createDirStore(dir).load('lines');
    const events = tape.exchanges[0]?.response?.events ?? [];
    expect(events.map((e) => e.data)).toEqual(LINES);
    expect(events.every((e, i) => i === 0 || e.offsetMs >= (events[i - 1]?.offsetMs ?? 0))).toBe(true);

    for (const timing of [{ mode: 'instant' as const }, { mode: 'recorded' as const }]) {
      const replay = await startProxy({
        mode: 'replay',
        tape: 'lines',
        dir,
        port: 0,
        log,
        routes: [],
        timing,
        saveAs: `lines-${timing.mode}`,
      });
      const again = await get(`${replay.url}/lines/stream`);
      await replay.close();
      expect(again).toEqual({ status: 200, text: WIRE, cut: false });
    }

    const faults = createFaultPlan([parseFaultRule('{when: {route: /lines}, then: {cut: {afterEvents: 2}}}')], { seed: 1 });
    const cutReplay = await startProxy({ mode: 'replay', tape: 'lines', dir, port: 0, log, routes: [], faults, saveAs: 'lines-cut' });
    const cut = await readUntilEnd(`${cutReplay.url}/lines/stream`);
    await cutReplay.close();
    expect(cut).toEqual({ text: `${LINES[0]}\n${LINES[1]}\n`, cut: true });
  });

  it('a stream over the spill limit goes to a side file event by event, and is served from it byte for byte', async () => {
    const store = createMemoryStore();
    const writer = await store.openWriter({ name: 'apart', ifExists: 'fail', header: { mode: 'record', routes: [] } });
    const req: ProxyRequest = {
      route: { prefix: '/lines', upstream },
      method: 'GET',
      path: '/stream',
      query: [],
      headers: {},
      body: Buffer.alloc(0),
      startedAt: new Date(),
      offsetMs: 0,
      t0: performance.now(),
    };
    const dispatcher = new Agent();
    const call = httpCall(req);
    const ex = exchangeRecord(
      call,
      await forwardAndCapture(req, new BufferSink(), { dispatcher, call, spill: createBodySpill(store, writer, 16) }),
    );
    await dispatcher.close();
    await writer.close();
    const stored = ex.response?.eventsFile;
    expect(stored).toMatchObject({ kind: 'file', events: LINES.length });
    const served = new BufferSink();
    await serveRecorded({ ...ex, type: 'exchange', id: '000000', seq: 0 }, served, {
      timing: { mode: 'instant' },
      headers: {},
      open: (body) => store.openBlob('apart', body),
    });
    expect(served.text()).toBe(WIRE);
  });
});
