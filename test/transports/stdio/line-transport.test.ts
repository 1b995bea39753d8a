import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { TapedeckError } from '../../../src/errors.js';
import { LineTransport } from '../../../src/transports/stdio/line-transport.js';

/** A writer that takes a chunk per timer tick, with a small buffer. */
function slowWriter(): Writable & { text: () => string; maxBuffered: () => number } {
  let text = '';
  let max = 0;
  const w = new Writable({
    highWaterMark: 64,
    write(chunk: Buffer, _enc, done) {
      max = Math.max(max, w.writableLength);
      text += chunk.toString();
      setTimeout(done, 1);
    },
  });
  return Object.assign(w, { text: () => text, maxBuffered: () => max });
}

describe('LineTransport', () => {
  it('sends in call order and holds back what the stream cannot take yet (drain), even when nobody awaits', async () => {
    const out = slowWriter();
    const t = new LineTransport(new PassThrough(), out);
    await t.start();
    const sends = Array.from({ length: 30 }, (_, i) => t.send({ jsonrpc: '2.0', id: i, result: { pad: 'x'.repeat(40) } }));
    await Promise.all(sends);
    await t.close();
    await new Promise((r) => setTimeout(r, 5));
    const ids = out
      .text()
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: number }).id);
    expect(ids).toEqual(Array.from({ length: 30 }, (_, i) => i));
    const line = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 10, result: { pad: 'x'.repeat(40) } }) + '\n');
    expect(out.maxBuffered()).toBeLessThanOrEqual(out.writableHighWaterMark + line);
  });

  it('a send to a stream that is gone resolves instead of waiting forever', async () => {
    const out = new Writable({ highWaterMark: 1, write: () => undefined });
    const t = new LineTransport(new PassThrough(), out);
    await t.start();
    const pending = t.send({ jsonrpc: '2.0', id: 1, result: {} });
    out.destroy();
    await pending;
    await t.send({ jsonrpc: '2.0', id: 2, result: {} });
  });

  it('hands out messages and batches one at a time; unreadable lines go to onerror with their text; onclose after the last', async () => {
    const input = new PassThrough();
    const t = new LineTransport(input, new PassThrough(), { maxLineBytes: 100 });
    const events: unknown[] = [];
    let busy = false;
    t.onmessage = async (m) => {
      expect(busy).toBe(false);
      busy = true;
      await new Promise((r) => setTimeout(r, 2));
      events.push(m);
      busy = false;
    };
    t.onerror = (err: TapedeckError, unread) => void events.push([err.code, unread?.text]);
    const closed = new Promise<void>((r) => (t.onclose = r));
    await t.start();
    input.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n\n   \nnot json\n');
    input.write(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]\n{"pad":"${'x'.repeat(200)}"}\n`);
    input.end('{"jsonrpc":"2.0","id":2,"method":"ping"}');
    await closed;
    expect(events).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      ['PARSE_ERROR', 'not json'],
      [{ jsonrpc: '2.0', method: 'notifications/initialized' }],
      ['LINE_TOO_LONG', undefined],
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
  });
});
