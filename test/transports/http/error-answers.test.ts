/**
 * One renderer for errors over HTTP (issue 24): every error tapedeck answers itself, from the proxy (a route, a
 * pass-through forward, a CONNECT tunnel) and from the viewer, is a `TapedeckError` rendered by
 * `providers/errors.ts`: an LLM API's own shape where an SDK parses it, else tapedeck's own
 * `{error:{code,type,message}}`, always JSON with its status.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startProxy, type RunningProxy } from '../../../src/front/server.js';
import { createMemoryStore } from '../../../src/tape/stores/memory-store.js';
import { costFnFor, usageCostFnFor } from '../../../src/view/model.js';
import { createOpenTapes } from '../../../src/view/open-tapes.js';
import { createViewApp } from '../../../src/view/view-app.js';
import { rawRequest } from '../../helpers/raw-http.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src');
const log = createLogger('silent');
/** Nothing listens there: a pass-through host that cannot be reached. */
const CLOSED = '127.0.0.9:9';

/** Send raw bytes (a CONNECT) and read the whole answer. */
function rawExchange(url: string, text: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => socket.write(text));
    let got = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (got += d));
    socket.on('end', () => resolve(got));
    socket.on('error', reject);
  });
}

function split(answer: string): { status: number; headers: string; body: string } {
  const at = answer.indexOf('\r\n\r\n');
  const head = answer.slice(0, at);
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: answer.slice(at + 4) };
}

describe('errors the proxy answers itself', () => {
  let dir: string;
  let proxy: RunningProxy;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-errors-'));
    proxy = await startProxy({
      mode: 'record',
      tape: 'errors',
      dir,
      port: 0,
      routes: [{ prefix: '/api', upstream: 'http://127.0.0.9:9' }],
      forwardProxy: { passThrough: [CLOSED] },
      log,
    });
  });
  afterAll(async () => {
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a route that is no LLM API gets tapedeck shape, with its code', async () => {
    const res = await rawRequest(proxy.url, { path: '/nowhere' });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body).error).toMatchObject({ code: 'NO_ROUTE', type: 'tapedeck_no_route' });
  });

  it('a pass-through host that cannot be reached: a 502 that says which', async () => {
    const res = await rawRequest(proxy.url, { path: `http://${CLOSED}/x`, headers: { host: CLOSED } });
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body).error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: expect.stringContaining(`could not reach ${CLOSED}`),
    });
  });

  it('a CONNECT tunnel tapedeck cannot open, or a bad one: JSON with the status', async () => {
    const down = split(await rawExchange(proxy.url, `CONNECT ${CLOSED} HTTP/1.1\r\nhost: ${CLOSED}\r\n\r\n`));
    expect(down.status).toBe(502);
    expect(down.headers).toContain('content-type: application/json');
    expect(JSON.parse(down.body).error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: expect.stringContaining(`could not reach ${CLOSED}`),
    });
    const bad = split(await rawExchange(proxy.url, 'CONNECT not-an-authority HTTP/1.1\r\nhost: x\r\n\r\n'));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error).toMatchObject({ code: 'BAD_REQUEST', type: 'tapedeck_bad_request' });
  });
});

describe('errors the viewer answers', () => {
  const viewer = createViewApp({
    tapes: createOpenTapes({ store: createMemoryStore(), usageCost: usageCostFnFor(undefined) }),
    costOf: costFnFor(undefined),
    log,
    port: () => 4321,
    boundAddress: '127.0.0.1',
  });
  const get = (p: string, host = '127.0.0.1:4321') => viewer.app.request(p, { headers: { host } });

  it('are tapedeck shape too, with the security headers', async () => {
    for (const [p, host, status, code] of [
      ['/nope', undefined, 404, 'NOT_FOUND'],
      ['/assets/nope.js', undefined, 404, 'NOT_FOUND'],
      ['/api/tapes', 'evil.example', 403, 'FORBIDDEN'],
      ['/api/tape?name=none', undefined, 404, 'TAPE_NOT_FOUND'],
      ['/api/rows?name=none&from=x', undefined, 400, 'BAD_ARGS'],
    ] as const) {
      const res = await get(p, host);
      expect(res.status, p).toBe(status);
      expect(res.headers.get('content-type'), p).toContain('application/json');
      expect(res.headers.get('x-content-type-options'), p).toBe('nosniff');
      const body = (await res.json()) as { error: { code: string; type: string; message: string } };
      expect(body.error, p).toMatchObject({ code, type: `tapedeck_${code.toLowerCase()}` });
    }
  });
});

describe('one renderer', () => {
  it('no module but providers/errors.ts builds an error body, and none writes an HTTP status line by hand', () => {
    const files = (d: string): string[] =>
      readdirSync(d).flatMap((n) => {
        const p = path.join(d, n);
        return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
      });
    const handMade = /JSON\.stringify\(\{ error|c\.json\(\{ error|HTTP\/1\.1 [45]\d\d|writeHead\([45]\d\d\)/;
    const found = files(SRC)
      .filter((f) => !f.includes(`${path.sep}demo${path.sep}`))
      .filter((f) => handMade.test(readFileSync(f, 'utf8')))
      .map((f) => path.relative(SRC, f));
    expect(found).toEqual([]);
  });
});
