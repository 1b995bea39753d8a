/**
 * A recorded JSON body goes on the tape as the text it came as (spaces and number spellings kept), request and
 * answer alike, through the record path (the call's and the answer's wire texts); one with a secret is redacted.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

let dir: string;
let upstream: Server;
let url: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-wire-'));
  upstream = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"total": 1.0, "items": [1e3]}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => upstream.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

describe('JSON bodies on a recorded tape', () => {
  it('keep the text they came as, both ways; a secret in one is still redacted', async () => {
    const proxy = await startProxy({
      mode: 'record',
      tape: 'wire',
      dir,
      port: 0,
      routes: [{ prefix: '/api', upstream: url }],
      log: createLogger('silent'),
    });
    const send = (body: string): Promise<Response> =>
      fetch(`${proxy.url}/api/sum`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await (await send('{"values": [1.0, 2.50]}')).arrayBuffer();
    const secret = 'sk-proj-' + 'c'.repeat(40);
    await (await send(`{"values": [1.0], "key": "${secret}"}`)).arrayBuffer();
    await proxy.close();
    const lines = readFileSync(path.join(dir, 'wire.jsonl'), 'utf8').trim().split('\n').slice(1);
    expect(lines[0]).toContain('"body":{"kind":"json","json":{"values": [1.0, 2.50]}}');
    expect(lines[0]).toContain('"body":{"kind":"json","json":{"total": 1.0, "items": [1e3]}}');
    expect(lines[1]).not.toContain(secret);
    expect(lines[1]).toContain('[REDACTED:');
  });
});
