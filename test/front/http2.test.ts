/**
 * HTTP/2 at the front, beside HTTP/1.1 on the same port: cleartext with prior knowledge (what the AWS SDK for
 * JavaScript sends to an `http://` endpoint), and chosen by ALPN inside an intercepted forward-proxy tunnel.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateCa, CA_CERT_FILE } from '../../src/front/ca.js';
import { startProxy } from '../../src/front/server.js';
import { readTape } from '../../src/tape/tape-reader.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { handExchange, handHeader, writeHandTape } from '../helpers/hand-tape.js';

let dir: string;
let upstream: ScriptedUpstream;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-h2-'));
  upstream = await startScriptedUpstream((req) => {
    const body = req.body as { stream?: boolean; messages: { content: string }[] };
    const said = body.messages[0]?.content ?? '';
    if (body.stream === true)
      return {
        kind: 'sse',
        events: ['one', 'two', 'three'].map((w) => `data: ${JSON.stringify({ choices: [{ delta: { content: w } }] })}`),
      };
    return {
      kind: 'json',
      body: { id: 'c1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ message: { content: `echo ${said}` } }] },
    };
  });
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

interface H2Answer {
  status: number;
  headers: Record<string, unknown>;
  text: string;
}

function h2post(session: ClientHttp2Session, p: string, body: unknown): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': p,
      'content-type': 'application/json',
      authorization: 'Bearer sk-h2-secret',
    });
    let status = 0;
    let headers: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      headers = h;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve({ status, headers, text: Buffer.concat(chunks).toString('utf8') }));
    stream.on('error', reject);
    stream.end(JSON.stringify(body));
  });
}

const chat = (content: string, stream = false): unknown => ({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content }] });

describe('HTTP/2 with prior knowledge on the proxy port', () => {
  it('records a JSON answer and a stream over h2c, beside HTTP/1.1, and replays them over h2c with the upstream gone', async () => {
    const routes = [{ prefix: '/openai', upstream: upstream.url }];
    const rec = await startProxy({ mode: 'record', tape: 'h2', dir, port: 0, routes });
    const session = h2connect(rec.url);
    try {
      const json = await h2post(session, '/openai/v1/chat/completions', chat('hi'));
      expect(json.status).toBe(200);
      expect(JSON.parse(json.text).choices[0].message.content).toBe('echo hi');
      // No connection-specific header reaches an HTTP/2 client (node's client would refuse the answer).
      expect(json.headers['transfer-encoding']).toBeUndefined();
      const sse = await h2post(session, '/openai/v1/chat/completions', chat('stream', true));
      expect(sse.headers['content-type']).toBe('text/event-stream');
      expect(sse.text.split('\n\n').filter((e) => e !== '')).toHaveLength(3);
      // The same port still serves HTTP/1.1.
      const h1 = await new Promise<number>((resolve, reject) => {
        const r = httpRequest(
          `${rec.url}/openai/v1/chat/completions`,
          { method: 'POST', headers: { 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        r.on('error', reject);
        r.end(JSON.stringify(chat('h1')));
      });
      expect(h1).toBe(200);
    } finally {
      session.close();
      await rec.close();
    }
    const tape = await readTape(path.join(dir, 'h2.jsonl'));
    expect(tape.exchanges.map((e) => [e.request.path, e.response?.status, e.response?.events?.length])).toEqual([
      ['/v1/chat/completions', 200, undefined],
      ['/v1/chat/completions', 200, 3],
      ['/v1/chat/completions', 200, undefined],
    ]);
    // No pseudo-header on the tape; the Host came from `:authority`; the key is redacted.
    const headers = tape.exchanges[0]!.request.headers;
    expect(Object.keys(headers).filter((k) => k.startsWith(':'))).toEqual([]);
    expect(headers.authorization).toBe('[REDACTED]');
    expect(readFileSync(path.join(dir, 'h2.jsonl'), 'utf8')).not.toContain('sk-h2-secret');
    const hits = upstream.requests.length;

    const rep = await startProxy({ mode: 'replay', tape: 'h2', dir, port: 0, routes });
    const again = h2connect(rep.url);
    try {
      expect(JSON.parse((await h2post(again, '/openai/v1/chat/completions', chat('hi'))).text).choices[0].message.content).toBe('echo hi');
      const sse = await h2post(again, '/openai/v1/chat/completions', chat('stream', true));
      expect(sse.text).toContain('"three"');
    } finally {
      again.close();
      await rep.close();
    }
    expect(upstream.requests.length).toBe(hits);
  });
});

describe('HTTP/2 by ALPN inside a forward-proxy tunnel', () => {
  it('serves an intercepted tunnel whose client chose h2, finding the origin by the HTTP/2 session', async () => {
    const origin = 'https://api.search.example';
    const caDir = path.join(dir, 'ca');
    const ca = loadOrCreateCa(caDir);
    const header = handHeader('fwd', { routes: [{ prefix: origin, upstream: origin }] });
    const exchange = handExchange(0, {
      offsetMs: 1,
      route: origin,
      upstream: origin,
      request: { method: 'GET', path: '/search', query: [['q', 'cats']], headers: {}, body: { kind: 'empty' } },
      response: { status: 200, headers: { 'content-type': 'application/json' }, body: { kind: 'json', json: { results: ['cats 1'] } } },
      timing: { ttfbMs: 1, durationMs: 1 },
    });
    writeHandTape(path.join(dir, 'fwd.jsonl'), [header, exchange]);
    const proxy = await startProxy({ mode: 'replay', tape: 'fwd', dir, port: 0, routes: [], forwardProxy: { ca: () => ca } });
    let session: ClientHttp2Session | undefined;
    try {
      const tunnel = await new Promise<Duplex>((resolve, reject) => {
        const r = httpRequest({ host: '127.0.0.1', port: proxy.port, method: 'CONNECT', path: 'api.search.example:443' });
        r.on('connect', (_res, socket) => resolve(socket));
        r.on('error', reject);
        r.end();
      });
      const tls = tlsConnect({
        socket: tunnel,
        servername: 'api.search.example',
        ca: readFileSync(path.join(caDir, CA_CERT_FILE)),
        ALPNProtocols: ['h2'],
      });
      await new Promise<void>((resolve, reject) => tls.once('secureConnect', resolve).once('error', reject));
      expect(tls.alpnProtocol).toBe('h2');
      session = h2connect(origin, { createConnection: () => tls });
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const s = session!.request({ ':method': 'GET', ':path': '/search?q=cats' });
        let status = 0;
        const chunks: Buffer[] = [];
        s.on('response', (h) => (status = Number(h[':status'])));
        s.on('data', (c: Buffer) => chunks.push(c));
        s.on('end', () => resolve({ status, text: Buffer.concat(chunks).toString('utf8') }));
        s.on('error', reject);
        s.end();
      });
      expect(answer).toEqual({ status: 200, text: JSON.stringify({ results: ['cats 1'] }) });
    } finally {
      session?.close();
      await proxy.close();
    }
  });
});
