import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancel } from '../../src/engine/cancel.js';
import { upstreamRequest, type BodyHandlers, type UpstreamBody } from '../../src/upstream/upstream-request.js';

let server: Server;
let url: string;
const dispatcher = new Agent({ connections: 8 });
/** Streams that wait for the test: the response is held here after its head. */
const held = new Map<string, ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/json')
      return void res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] }).end('{"ok":true}');
    if (req.url?.startsWith('/echo')) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(`${req.method} ${req.url} ${Buffer.concat(chunks).toString()}`));
      return;
    }
    if (req.url?.startsWith('/hold/')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first ');
      held.set(req.url, res);
      return;
    }
    if (req.url === '/never') return; // no head, ever
    if (req.url === '/hints') {
      res.writeEarlyHints({ link: '</style.css>; rel=preload' });
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('after the hints');
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await dispatcher.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Everything the body delivers, and how it ended. */
function collect(body: UpstreamBody): { text: () => string; ended: Promise<'end' | Error> } {
  const chunks: Buffer[] = [];
  let settle!: (v: 'end' | Error) => void;
  const ended = new Promise<'end' | Error>((resolve) => (settle = resolve));
  const handlers: BodyHandlers = { data: (c) => chunks.push(c), end: () => settle('end'), error: (e) => settle(e) };
  body.read(handlers);
  return { text: () => Buffer.concat(chunks).toString(), ended };
}

describe('upstreamRequest', () => {
  it('gives the head, then the body, including what arrived before the body was read', async () => {
    const res = await upstreamRequest(`${url}/json`, { method: 'GET', headers: {}, dispatcher });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    // Read late: the body has arrived meanwhile and must still be delivered.
    await new Promise((r) => setTimeout(r, 20));
    const body = collect(res.body);
    expect(await body.ended).toBe('end');
    expect(body.text()).toBe('{"ok":true}');
  });

  it('skips an informational head (103 Early Hints) for the answer’s own', async () => {
    const res = await upstreamRequest(`${url}/hints`, { method: 'GET', headers: {}, dispatcher });
    expect(res.statusCode).toBe(200);
    const body = collect(res.body);
    await body.ended;
    expect(body.text()).toBe('after the hints');
  });

  it('sends the method and the body, with the query', async () => {
    const res = await upstreamRequest(`${url}/echo?x=1`, { method: 'POST', headers: {}, body: Buffer.from('hello'), dispatcher });
    const body = collect(res.body);
    await body.ended;
    expect(body.text()).toBe('POST /echo?x=1 hello');
  });

  it('rejects with undici’s error when nothing answers', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const err = await upstreamRequest(`http://127.0.0.1:${port}/`, { method: 'GET', headers: {}, dispatcher }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('rejects with the signal’s reason when cancelled before the head, or before it was sent', async () => {
    const cancel = new Cancel();
    const pending = upstreamRequest(`${url}/never`, { method: 'GET', headers: {}, dispatcher, signal: cancel });
    setTimeout(() => cancel.abort(new Error('stopped')), 20);
    await expect(pending).rejects.toThrow('stopped');
    const already = new Cancel();
    already.abort(new Error('too late'));
    await expect(upstreamRequest(`${url}/json`, { method: 'GET', headers: {}, dispatcher, signal: already })).rejects.toThrow('too late');
  });

  it('fails the body with the signal’s reason when cancelled after the head', async () => {
    const cancel = new Cancel();
    const res = await upstreamRequest(`${url}/hold/cancel`, { method: 'GET', headers: {}, dispatcher, signal: cancel });
    const body = collect(res.body);
    cancel.abort(new Error('client left'));
    const ended = await body.ended;
    expect(ended).toBeInstanceOf(Error);
    expect((ended as Error).message).toBe('client left');
    expect(body.text()).toBe('first ');
  });

  it('holds chunks while paused and delivers them in order on resume', async () => {
    const res = await upstreamRequest(`${url}/hold/pause`, { method: 'GET', headers: {}, dispatcher });
    const chunks: string[] = [];
    let ended = false;
    res.body.read({ data: (c) => chunks.push(c.toString()), end: () => (ended = true), error: () => undefined });
    await new Promise((r) => setTimeout(r, 20));
    expect(chunks).toEqual(['first ']);
    res.body.pause();
    held.get('/hold/pause')?.end('second');
    await new Promise((r) => setTimeout(r, 50));
    expect(chunks).toEqual(['first ']);
    expect(ended).toBe(false);
    res.body.resume();
    await new Promise((r) => setTimeout(r, 20));
    expect(chunks.join('')).toBe('first second');
    expect(ended).toBe(true);
  });

  it('delivers nothing after destroy, and aborts the upstream request', async () => {
    const res = await upstreamRequest(`${url}/hold/destroy`, { method: 'GET', headers: {}, dispatcher });
    const upstreamClosed = new Promise<void>((resolve) => held.get('/hold/destroy')?.once('close', () => resolve()));
    const seen: string[] = [];
    res.body.read({ data: (c) => seen.push(c.toString()), end: () => seen.push('end'), error: () => seen.push('error') });
    await new Promise((r) => setTimeout(r, 20));
    res.body.destroy();
    await upstreamClosed;
    expect(seen).toEqual(['first ']);
  });
});
