/**
 * A replay responder of one's own, from the library (docs/library.md, "A responder of your own"): it decides, and the
 * engine acts: an answer of its own (whole, or a stream sent at the client's pace), live, or passed on to the
 * responders behind it and finally the tape. Every answer is on the replay tape.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTape, startProxy, type ReplayResponder } from '../../../src/index.js';
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
  decide(req) {
    if (req.path === '/health')
      return Promise.resolve({ answer: { status: 200, headers: { 'x-from': 'custom' }, json: { ok: true } }, reason: 'health check' });
    if (req.path === '/ticks') {
      async function* ticks(): AsyncGenerator<string> {
        for (const n of [1, 2, 3]) yield `data: ${n}\n\n`;
      }
      return Promise.resolve({ answer: { status: 200, headers: { 'content-type': 'text/event-stream' }, stream: ticks() } });
    }
    if (req.path === '/fresh') return Promise.resolve({ live: { reason: 'always live', headers: { 'x-from': 'custom' } } });
    return Promise.resolve(undefined);
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
      ['/health', 'mock', 'health check'],
      ['/ticks', 'mock', 'answered by the custom responder'],
      ['/fresh', 'live', 'always live'],
      ['/items', 'exact', expect.any(String)],
    ]);
    expect(out.exchanges[1]?.response?.events?.map((e) => e.data)).toEqual(['1', '2', '3']);
  });
});
