/**
 * Response sinks (src/http/sink.ts) by their public behaviour: what a client receives through a node sink on a real
 * loopback server, what a buffer sink keeps, and how a cut and a client that left are passed on.
 */
import { once } from 'node:events';
import { createConnection } from 'node:net';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { BufferSink, nodeHeaders, nodeSink, sendError, type ResponseSink } from '../../src/http/sink.js';

const enc = new TextEncoder();
let server: Server | undefined;

afterEach(async () => {
  if (server) await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A loopback server whose every request is answered by `answer`; resolves to its URL. */
async function serve(answer: (res: ServerResponse) => void): Promise<string> {
  server = createServer((_req, res) => answer(res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
}

/** GET `url`; resolves with the response as soon as its head arrives. */
async function get(url: string): Promise<IncomingMessage> {
  const req = request(url);
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  return res;
}

async function bodyOf(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += (chunk as Buffer).toString();
  return text;
}

describe('nodeHeaders', () => {
  it('splits a multi-valued set-cookie (newline-joined on the tape) and nothing else', () => {
    expect(nodeHeaders({ 'set-cookie': 'a=1\nb=2', 'x-multi': 'a\nb', 'content-type': 'text/plain' })).toEqual({
      'set-cookie': ['a=1', 'b=2'],
      'x-multi': 'a\nb',
      'content-type': 'text/plain',
    });
  });
});

describe('nodeSink', () => {
  it('sends the head, the chunks and the end, with set-cookie as separate headers', async () => {
    const url = await serve((res) => {
      const sink = nodeSink(res);
      sink.head(201, { 'content-type': 'text/plain', 'set-cookie': 'a=1\nb=2' });
      sink.write(enc.encode('hello '));
      sink.write(enc.encode('world'));
      sink.end();
    });
    const res = await get(url);
    expect(res.statusCode).toBe(201);
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(await bodyOf(res)).toBe('hello world');
  });

  it('opens an event stream before its first event, which may come much later', async () => {
    let sink!: ResponseSink;
    const url = await serve((res) => {
      sink = nodeSink(res);
      sink.head(200, { 'content-type': 'text/event-stream' });
    });
    const res = await get(url); // would wait forever if the head waited for the first event
    expect(res.headers['content-type']).toBe('text/event-stream');
    sink.write(enc.encode('data: 1\n\n'));
    sink.end();
    expect(await bodyOf(res)).toBe('data: 1\n\n');
  });

  it.each([
    ['cut', false],
    ['hold, then cut', true],
  ])('%s: what was written reaches the client, then the connection is cut rather than ended', async (_name, hold) => {
    const url = await serve((res) => {
      const sink = nodeSink(res);
      sink.head(200, { 'content-type': 'text/plain' });
      sink.write(enc.encode('partial'));
      if (!hold) return sink.cut();
      sink.hold?.();
      setImmediate(() => sink.cut());
    });
    const res = await get(url);
    let got = '';
    res.on('data', (d: Buffer) => (got += d.toString()));
    const [err] = (await once(res, 'error')) as [NodeJS.ErrnoException];
    expect(err.code).toBe('ECONNRESET');
    expect(got).toBe('partial');
  });

  it('hold: what this turn wrote waits for the end, and goes out with it (one write, not two)', async () => {
    let sink!: ResponseSink;
    const received: string[] = [];
    const url = new URL(
      await serve((res) => {
        sink = nodeSink(res);
        sink.head(200, { 'content-type': 'text/plain' });
        sink.write(enc.encode('whole answer'));
        sink.hold?.();
      }),
    );
    const socket = createConnection(Number(url.port), url.hostname);
    socket.on('data', (d: Buffer) => received.push(d.toString('latin1')));
    socket.write(`GET / HTTP/1.1\r\nhost: ${url.host}\r\n\r\n`);
    onTestFinished(() => void socket.destroy());
    // Without the hold, the head and the chunk would be on the client by now (node sends them at the end of the turn).
    while (sink === undefined) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 100));
    expect(received).toEqual([]);
    sink.end();
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    expect(received).toHaveLength(1);
    expect(received[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nc\r\nwhole answer\r\n0\r\n\r\n$/);
  });

  it('onClose: called when the client leaves before the end, not after a normal end', async () => {
    const closed: string[] = [];
    let left!: () => void;
    const clientLeft = new Promise<void>((resolve) => (left = resolve));
    const url = await serve((res) => {
      const sink = nodeSink(res);
      const which = res.req.url as string;
      sink.onClose(() => {
        closed.push(which);
        left();
      });
      sink.head(200, { 'content-type': 'text/plain' });
      sink.write(enc.encode('x'));
      if (which === '/ends') sink.end();
    });
    await bodyOf(await get(`${url}ends`));
    const res = await get(`${url}leaves`);
    res.destroy();
    await clientLeft;
    expect(closed).toEqual(['/leaves']);
  });
});

describe('BufferSink', () => {
  it('keeps the head and every chunk, and says whether the answer was cut', () => {
    const sink = new BufferSink();
    sink.head(200, { 'content-type': 'text/event-stream' });
    expect(sink.write(enc.encode('data: 1\n\n'))).toBe(true);
    sink.write(enc.encode('data: 2\n\n'));
    sink.end();
    expect([sink.status, sink.headers, sink.text(), sink.wasCut]).toEqual([
      200,
      { 'content-type': 'text/event-stream' },
      'data: 1\n\ndata: 2\n\n',
      false,
    ]);
    const cut = new BufferSink();
    cut.head(200, {});
    cut.cut();
    expect(cut.wasCut).toBe(true);
  });
});

describe('sendError', () => {
  it('sendError answers with the rendered error, or cuts an answer already begun', async () => {
    const url = await serve((res) => {
      if (res.req.url === '/begun') res.writeHead(200).write('started');
      sendError(res, { status: 503, headers: { 'content-type': 'application/json' }, body: { error: { message: 'tape full' } } });
    });
    const res = await get(url);
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(await bodyOf(res))).toEqual({ error: { message: 'tape full' } });
    // The connection is cut: no clean end reaches the client (whether or not the head had left).
    await expect(get(`${url}begun`).then(bodyOf)).rejects.toThrow(/socket hang up|aborted|ECONNRESET/);
  });
});
