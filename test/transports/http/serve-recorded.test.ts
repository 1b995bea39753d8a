/**
 * Serving a recorded stream (src/transports/http/serve-recorded.ts) to a client that does not read: replay honours backpressure
 * as recording does. A recorded stream of 24 MB, in the tape's line or stored apart, is served on a real loopback
 * server to a client that reads nothing for a while: what tapedeck holds for it (the response's unsent bytes, and
 * for a stream stored apart what it has read from the store) stays small; once the client reads, it gets every byte.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { serveRecorded } from '../../../src/transports/http/serve-recorded.js';
import { nodeSink, type ResponseSink } from '../../../src/http/sink.js';
import { eventLines } from '../../../src/tape/event-file.js';
import { createMemoryStore } from '../../../src/tape/stores/memory-store.js';
import type { Exchange, SseEvent } from '../../../src/tape/schema.js';
import { sseEventText } from '../../../src/tape/framing/sse.js';
import type { StoredBody } from '../../../src/tape/store.js';

const MiB = 1024 * 1024;
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server) await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** About `bytes` of chat-completion chunks, one event each, the last few with `raw` text and odd fields. */
function recordedEvents(bytes: number): SseEvent[] {
  const out: SseEvent[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const data = JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: `word ${i} ` } }] });
    out.push({ offsetMs: i / 100, data });
    size += data.length + 8;
  }
  out.push({ offsetMs: 9999, event: 'done', data: 'a\nb', id: '7', retry: 10 });
  out.push({ offsetMs: 9999, data: 'x', raw: 'data:x\r\n\r\n' });
  return out;
}

function streamExchange(response: Exchange['response']): Exchange {
  return {
    type: 'exchange',
    id: '000000',
    seq: 0,
    startedAt: new Date().toISOString(),
    offsetMs: 0,
    transport: 'http',
    route: '/llm',
    request: { method: 'GET', path: '/stream', query: [], headers: {}, body: { kind: 'empty' } },
    response,
    timing: { durationMs: 1 },
  };
}

/** A node sink that notes the most bytes the response ever held unsent (its writable buffer). */
function watched(res: ServerResponse): { sink: ResponseSink; held: () => number } {
  const sink = nodeSink(res);
  let most = 0;
  return {
    sink: {
      ...sink,
      write(chunk) {
        const ok = sink.write(chunk);
        most = Math.max(most, res.writableLength);
        return ok;
      },
    },
    held: () => most,
  };
}

/** Serve `ex` to one client that reads nothing until `read()`; `held()`: the most the response held unsent. */
async function serveToIdleClient(
  ex: Exchange,
  open?: (body: StoredBody) => Readable,
): Promise<{ held: () => number; read: () => Promise<string> }> {
  let held = (): number => 0;
  let served: Promise<void> = Promise.resolve();
  server = createServer((_req, res) => {
    const w = watched(res);
    held = w.held;
    served = serveRecorded(ex, w.sink, { timing: { mode: 'instant' }, headers: {}, open });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const req = request(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  // Not read: the client's socket buffers fill, then the kernel's, then the server's writes report it.
  res.pause();
  await sleep(500);
  return {
    held: () => held(),
    read: async () => {
      const hash = createHash('sha256');
      for await (const chunk of res) hash.update(chunk as Buffer);
      await served;
      return hash.digest('hex');
    },
  };
}

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('serving a recorded stream to a client that does not read', () => {
  it('a stream in the line: written as the client takes it, not all at once', async () => {
    const events = recordedEvents(24 * MiB);
    const ex = streamExchange({ status: 200, headers: { 'content-type': 'text/event-stream' }, events, tail: 'data: cut' });
    const client = await serveToIdleClient(ex);
    // Without backpressure the whole 24 MB waits in the response's buffer.
    expect(client.held()).toBeLessThan(2 * MiB);
    expect(await client.read()).toBe(sha(events.map(sseEventText).join('') + 'data: cut'));
  }, 60_000);

  it('a stream stored apart: read from the store only as the client takes it', async () => {
    const events = recordedEvents(24 * MiB);
    const store = createMemoryStore();
    const sink = store.blobSink('t');
    sink.write(Buffer.from(eventLines(events)));
    const stored = { ...(await sink.end('text')), encoding: 'text' as const, events: events.length };
    let read = 0;
    const open = (body: StoredBody): Readable => {
      const stream = store.openBlob('t', body);
      stream.on('data', (c: Buffer) => (read += c.byteLength));
      return stream;
    };
    const ex = streamExchange({ status: 200, headers: { 'content-type': 'text/event-stream' }, eventsFile: stored });
    const client = await serveToIdleClient(ex, open);
    expect(client.held()).toBeLessThan(2 * MiB);
    // What the kernel's buffers and the response took, and a little more: not the file.
    expect(read).toBeLessThan(12 * MiB);
    expect(await client.read()).toBe(sha(events.map(sseEventText).join('')));
    expect(read).toBe(stored.bytes);
  }, 60_000);

  it('a stream stored apart whose file is not what was recorded is cut, never ended as whole', async () => {
    const events = recordedEvents(64 * 1024);
    const store = createMemoryStore();
    const sink = store.blobSink('t');
    sink.write(Buffer.from(eventLines(events)));
    // One event fewer on the record than in the file.
    const stored = { ...(await sink.end('text')), encoding: 'text' as const, events: events.length - 1 };
    const ex = streamExchange({ status: 200, headers: { 'content-type': 'text/event-stream' }, eventsFile: stored });
    const client = await serveToIdleClient(ex, (body) => store.openBlob('t', body));
    await expect(client.read()).rejects.toThrow(/aborted|socket hang up|terminated/);
  }, 60_000);
});
