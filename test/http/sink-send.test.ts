/**
 * The helpers responders answer with (src/http/sink-send.ts): whole answers into a buffer sink, and a paced stream
 * on a real node response over loopback, whose writes wait for a client that is not reading and stop for one that left.
 */
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.js';
import { httpError } from '../../src/providers/errors.js';
import { BufferSink, nodeSink } from '../../src/http/sink.js';
import { openSse, sendBody, sendErrorAnswer, sendJson, sseEvent } from '../../src/http/sink-send.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server) await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A loopback server whose one response `open` starts answering; resolves with what it made and both ends. */
async function exchange<T>(open: (res: ServerResponse) => T): Promise<{ res: ServerResponse; client: IncomingMessage; made: T }> {
  let take!: (v: { res: ServerResponse; made: T }) => void;
  const taken = new Promise<{ res: ServerResponse; made: T }>((resolve) => (take = resolve));
  server = createServer((_req, res) => take({ res, made: open(res) }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const req = request(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
  req.on('error', () => undefined); // a client that leaves on purpose
  req.end();
  const [client] = (await once(req, 'response')) as [IncomingMessage];
  client.on('error', () => undefined);
  return { ...(await taken), client };
}

/** Let every pending promise callback run (no I/O can happen meanwhile). */
async function microtasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('whole answers', () => {
  it('sendJson, sendBody and sendErrorAnswer write a head, the body and an end', () => {
    const json = new BufferSink();
    sendJson(json, 200, { ok: true }, { 'x-a': '1' });
    expect([json.status, json.headers, json.text()]).toEqual([200, { 'content-type': 'application/json', 'x-a': '1' }, '{"ok":true}']);
    const empty = new BufferSink();
    sendJson(empty, 202, undefined, { 'mcp-session-id': 's' });
    expect([empty.status, empty.headers, empty.text()]).toEqual([202, { 'mcp-session-id': 's' }, '']);
    const text = new BufferSink();
    sendBody(text, 202, { 'content-type': 'text/plain' }, 'Accepted');
    expect(text.text()).toBe('Accepted');
    const err = new BufferSink();
    sendErrorAnswer(err, httpError(new TapedeckError('SESSION_NOT_FOUND', 'Session not found')));
    expect(err.status).toBe(404);
    expect(JSON.parse(err.text())).toMatchObject({ error: { code: 'SESSION_NOT_FOUND', message: 'Session not found' } });
  });

  it('sseEvent writes one event as the wire has it', () => {
    expect(sseEvent('message', '{"a":1}')).toBe('event: message\ndata: {"a":1}\n\n');
  });
});

describe('openSse on a node response', () => {
  const chunk = Buffer.alloc(256 * 1024, 'x');

  /** Write until the socket pushes back; returns the write that is waiting for the client. */
  async function fill(
    stream: ReturnType<typeof openSse>,
    res: ServerResponse,
  ): Promise<{ pending: Promise<boolean>; settled: () => boolean }> {
    for (let i = 0; i < 1000; i++) {
      let done = false;
      const pending = stream.write(chunk).then((ok) => ((done = true), ok));
      await microtasks();
      if (res.writableNeedDrain) return { pending, settled: () => done };
      expect(await pending).toBe(true);
    }
    throw new Error('the socket never pushed back');
  }

  it('a write waits while the client does not read, and goes on when it does', async () => {
    const { res, client, made: stream } = await exchange((r) => openSse(nodeSink(r), 200, { 'x-tapedeck-match': 'exact' }));
    client.pause();
    expect(client.headers['content-type']).toBe('text/event-stream');
    expect(client.headers['x-tapedeck-match']).toBe('exact');
    const { pending, settled } = await fill(stream, res);
    // The client reads nothing: the write must still be waiting (no byte can drain without I/O).
    await microtasks();
    expect(settled()).toBe(false);
    client.resume();
    expect(await pending).toBe(true);
    stream.end();
    await once(client, 'end');
  });

  it('a client that leaves: the waiting write is released, onGone runs once, later writes resolve false and send nothing', async () => {
    let gone = 0;
    const { res, client, made: stream } = await exchange((r) => openSse(nodeSink(r), 200, {}, () => gone++));
    client.pause();
    const { pending } = await fill(stream, res);
    client.destroy();
    if (!res.closed) await once(res, 'close');
    // The waiting write is released (node may signal a drain as the socket goes, before its close), and the stream knows.
    await pending;
    expect(gone).toBe(1);
    expect(stream.gone).toBe(true);
    expect(await stream.write('data: late\n\n')).toBe(false);
    stream.end();
    expect(gone).toBe(1);
  });

  it('a normal end is not a client leaving', async () => {
    let gone = 0;
    const { res, client, made: stream } = await exchange((r) => openSse(nodeSink(r), 200, {}, () => gone++));
    expect(await stream.write(sseEvent('message', 'hi'))).toBe(true);
    stream.end();
    let body = '';
    for await (const c of client) body += (c as Buffer).toString();
    expect(body).toBe('event: message\ndata: hi\n\n');
    if (!res.closed) await once(res, 'close');
    expect(gone).toBe(0);
  });
});
