/**
 * A handshake the client side would refuse (no key, a version other than 13, a method other than GET, a malformed
 * subprotocol list) is refused before anything goes upstream: no live session is opened for a client that gets a 400.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createLogger } from '../../../src/log.js';
import { startProxy, type RunningProxy } from '../../../src/front/server.js';
import { rawRequest } from '../../helpers/raw-http.js';
import { realtimeScript, startWsUpstream, type WsUpstream } from '../../helpers/ws-upstream.js';

const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';
const upgrade = { connection: 'Upgrade', upgrade: 'websocket' };

let dir: string;
let upstream: WsUpstream;
let proxy: RunningProxy;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-handshake-'));
  upstream = await startWsUpstream(realtimeScript());
  proxy = await startProxy({
    mode: 'record',
    tape: 'handshake',
    dir,
    port: 0,
    log: createLogger('silent'),
    routes: [{ prefix: '/openai', upstream: upstream.url }],
  });
});
afterAll(async () => {
  await proxy.close();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a malformed WebSocket handshake', () => {
  it.each([
    ['no Sec-WebSocket-Key', 'GET', { ...upgrade, 'sec-websocket-version': '13' }, 400, /no Sec-WebSocket-Key/],
    [
      'an invalid key',
      'GET',
      { ...upgrade, 'sec-websocket-key': 'short', 'sec-websocket-version': '13' },
      400,
      /invalid Sec-WebSocket-Key/,
    ],
    ['no version', 'GET', { ...upgrade, 'sec-websocket-key': KEY }, 400, /Sec-WebSocket-Version missing/],
    ['version 12', 'GET', { ...upgrade, 'sec-websocket-key': KEY, 'sec-websocket-version': '12' }, 400, /Sec-WebSocket-Version "12"/],
    [
      'a subprotocol offered twice',
      'GET',
      { ...upgrade, 'sec-websocket-key': KEY, 'sec-websocket-version': '13', 'sec-websocket-protocol': 'realtime, realtime' },
      400,
      /offered twice/,
    ],
    [
      'a malformed subprotocol list',
      'GET',
      { ...upgrade, 'sec-websocket-key': KEY, 'sec-websocket-version': '13', 'sec-websocket-protocol': 'realtime,,x' },
      400,
      /malformed Sec-WebSocket-Protocol/,
    ],
    ['POST', 'POST', { ...upgrade, 'sec-websocket-key': KEY, 'sec-websocket-version': '13' }, 405, /method is POST/],
  ])('%s: refused with a clear answer, nothing dialled upstream', async (_what, method, headers, status, message) => {
    const before = upstream.connections;
    const res = await rawRequest(proxy.url, { method, path: '/openai/v1/realtime?model=gpt-realtime', headers });
    expect(res.status).toBe(status);
    expect(upstream.connections).toBe(before);
    expect((JSON.parse(res.body) as { error: { message: string } }).error.message).toMatch(message);
    if (status === 400 && /version/i.test(res.body)) expect(res.headers['sec-websocket-version']).toBe('13, 8');
    if (status === 405) expect(res.headers.allow).toBe('GET');
  });

  it('a sound handshake still opens its session', async () => {
    const before = upstream.connections;
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/openai/v1/realtime?model=gpt-realtime`, 'realtime');
    const first = await new Promise<string>((resolve, reject) => {
      ws.once('message', (d) => resolve(d.toString()));
      ws.once('error', reject);
    });
    expect(JSON.parse(first)).toMatchObject({ type: 'session.created' });
    ws.close();
    await new Promise((r) => ws.once('close', r));
    expect(upstream.connections).toBe(before + 1);
  });
});
