/**
 * A replay responder of one's own, from the library (docs/library.md, "A responder of your own"): it answers by
 * writing to the sink it is given (whole, or as a stream at the client's pace), forwards live through the context,
 * or passes the request on to the responders behind it and finally the tape.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTape, openSse, sendJson, startProxy, type ReplayResponder } from '../../../src/index.js';
import { createLogger } from '../../../src/log.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../../helpers/scripted-upstream.js';

const log = createLogger('silent');
let dir: string;
let upstream: ScriptedUpstream;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-responder-'));
  upstream = await startScriptedUpstream((req) => ({ kind: 'json', body: { recorded: req.url } }));
  const rec = await startProxy({ mode: 'record', tape: 'api', dir, port: 0, routes: [{ prefix: '/api', upstream: upstream.url }], log });
  await (await fetch(`${rec.url}/api/items`)).json();
  await rec.close();
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const custom: ReplayResponder = {
  name: 'custom',
  async handle(req, ctx, sink) {
    if (req.path === '/health') {
      sendJson(sink, 200, { ok: true }, { 'x-from': 'custom' });
      return true;
    }
    if (req.path === '/ticks') {
      const stream = openSse(sink, 200, {});
      for (const n of [1, 2, 3]) if (!(await stream.write(`data: ${n}\n\n`))) return true;
      stream.end();
      return true;
    }
    if (req.path === '/fresh') {
      await ctx.forwardLive(req, sink, { reason: 'always live', headers: { 'x-from': 'custom' } });
      return true;
    }
    return false;
  },
};

describe('a responder of your own', () => {
  it('answers whole or streamed, goes live through the context, or passes the request on to the tape', async () => {
    const rep = await startProxy({
      mode: 'replay',
      tape: 'api',
      dir,
      port: 0,
      routes: [],
      saveAs: 'api-replay',
      responders: [custom],
      log,
    });
    try {
      const health = await fetch(`${rep.url}/api/health`);
      expect([health.status, health.headers.get('x-from'), await health.json()]).toEqual([200, 'custom', { ok: true }]);
      const ticks = await fetch(`${rep.url}/api/ticks`);
      expect(ticks.headers.get('content-type')).toBe('text/event-stream');
      expect(await ticks.text()).toBe('data: 1\n\ndata: 2\n\ndata: 3\n\n');
      const fresh = await fetch(`${rep.url}/api/fresh`);
      expect([fresh.headers.get('x-from'), fresh.headers.get('x-tapedeck-match'), await fresh.json()]).toEqual([
        'custom',
        'live',
        { recorded: '/fresh' },
      ]);
      const items = await fetch(`${rep.url}/api/items`);
      expect([items.headers.get('x-tapedeck-match'), await items.json()]).toEqual(['exact', { recorded: '/items' }]);
    } finally {
      await rep.close();
    }
    const out = await loadTape(dir, 'api-replay');
    expect(out.exchanges.map((ex) => [ex.request.path, ex.match?.kind, ex.match?.reason])).toEqual([
      ['/fresh', 'live', 'always live'],
      ['/items', 'exact', expect.any(String)],
    ]);
  });
});
