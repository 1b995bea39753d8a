/**
 * The forwarder (src/upstream/forward.ts) against a raw loopback upstream, through a sink that keeps every write: what
 * the client is sent, in how many writes, and what the exchange captures.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forwardAndCapture } from '../../src/upstream/forward.js';
import type { ResponseSink } from '../../src/http/sink.js';
import type { ProxyRequest } from '../../src/http/types.js';
import { sseEventText } from '../../src/tape/framing/sse.js';

const events = Array.from({ length: 16 }, (_, i) => `data: {"n":${i},"text":"word ${i}"}\n\n`);
/** The whole answer, chunked, one HTTP chunk per event: written to the socket at once, as a zero-work server does. */
const answer = [
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n',
  ...events.map((e) => `${Buffer.byteLength(e).toString(16)}\r\n${e}\r\n`),
  '0\r\n\r\n',
].join('');

let server: Server;
let upstream: string;
const dispatcher = new Agent();

beforeAll(async () => {
  server = createServer((socket) => {
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString();
      if (!got.includes('\r\n\r\n')) return;
      const asked = got;
      got = '';
      if (!asked.startsWith('GET /sized')) return void socket.write(answer);
      // A body with a length, in two reads.
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 10\r\n\r\nfirst');
      setTimeout(() => socket.write('-last'), 20);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  upstream = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await dispatcher.close();
  await new Promise((resolve) => server.close(resolve));
});

function request(path = '/stream'): ProxyRequest {
  return {
    route: { prefix: '/llm', upstream },
    method: 'GET',
    path,
    query: [],
    headers: { host: 'localhost' },
    body: Buffer.alloc(0),
    startedAt: new Date(),
    offsetMs: 0,
    t0: performance.now(),
  };
}

function keepingSink(): ResponseSink & { writes: Buffer[]; ended: boolean } {
  const sink = {
    writes: [] as Buffer[],
    ended: false,
    head: () => undefined,
    write: (c: Uint8Array) => (sink.writes.push(Buffer.from(c)), true),
    onDrain: () => undefined,
    end: () => void (sink.ended = true),
    cut: () => undefined,
    onClose: () => undefined,
  };
  return sink;
}

describe('forwardAndCapture', () => {
  it('sends what arrives in one turn in one write, and captures every event of it', async () => {
    const sink = keepingSink();
    const ex = await forwardAndCapture(request(), sink, { dispatcher, commit: async () => true });
    expect(sink.ended).toBe(true);
    expect(Buffer.concat(sink.writes).toString()).toBe(events.join(''));
    // One read from the upstream held all 16 HTTP chunks: the client gets them as one write, not 16.
    expect(sink.writes).toHaveLength(1);
    expect(ex.response?.events?.map(sseEventText)).toEqual(events);
  });

  it('holds the last bytes of an answer with a length until its exchange is committed', async () => {
    const sink = keepingSink();
    let sentAtCommit = '';
    const ex = await forwardAndCapture(request('/sized'), sink, {
      dispatcher,
      commit: async () => {
        sentAtCommit = Buffer.concat(sink.writes).toString();
        return true;
      },
    });
    expect(sentAtCommit).toBe('first');
    expect(Buffer.concat(sink.writes).toString()).toBe('first-last');
    expect(sink.ended).toBe(true);
    expect(ex.response?.body).toEqual({ kind: 'text', text: 'first-last' });
  });
});
