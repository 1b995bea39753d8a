/**
 * stdio record on the engine's path: every client message is settled live and its tee commits its record before the
 * client gets the answer (what a client has, the tape has first), even over a slow store; a tape that cannot take a
 * record stops the relay (the client never gets an answer the tape does not have).
 */
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { recordStdio } from '../../../src/transports/stdio/record.js';
import { createMemoryStore } from '../../../src/tape/stores/memory-store.js';
import type { NewExchange } from '../../../src/tape/stores/tape-writer.js';
import type { Exchange } from '../../../src/tape/schema.js';

/** A stdio server that answers every request with its id and closes when its stdin does. */
const SERVER = `
let buf = '';
process.stdin.on('data', (c) => {
  buf += c;
  for (let i = buf.indexOf('\\n'); i !== -1; i = buf.indexOf('\\n')) {
    const m = JSON.parse(buf.slice(0, i));
    buf = buf.slice(i + 1);
    if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { n: m.id } }) + '\\n');
  }
});
`;

/** A client's stdout that notes, for every answer it gets, whether its request's record was already on the tape. */
class Client extends Writable {
  text = '';
  onTapeWhenGot: boolean[] = [];
  constructor(private readonly committed: Exchange[]) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      const id = (JSON.parse(line) as { id: number }).id;
      this.onTapeWhenGot.push(this.committed.some((ex) => (ex.request.body as { json?: { id?: number } }).json?.id === id));
    }
    done();
  }
}

async function record(fail: boolean): Promise<{ client: Client; stderr: string; committed: Exchange[]; code: number }> {
  const store = createMemoryStore();
  const writer = await store.openWriter({ name: 'order', header: { mode: 'record', routes: [] } });
  const committed: Exchange[] = [];
  const append = writer.append.bind(writer);
  // A slow store: each record is on the tape a while after it was handed over (or never, once the tape fails).
  (writer as { append: (ex: NewExchange) => Promise<Exchange> }).append = (ex) =>
    fail && ex.response?.body !== undefined
      ? new Promise((_, reject) => setTimeout(() => reject(new Error('disk full')), 30))
      : append(ex).then((stored) => new Promise((resolve) => setTimeout(() => (committed.push(stored), resolve(stored)), 30)));
  const stdin = new PassThrough();
  const client = new Client(committed);
  let stderr = '';
  const errors = new Writable({ write: (c: Buffer, _e, done) => ((stderr += c.toString()), done()) });
  const recorded = recordStdio({
    command: process.execPath,
    args: ['-e', SERVER],
    name: 'order',
    writer,
    stdin,
    stdout: client,
    stderr: errors,
    log: createLogger('silent'),
  });
  stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
  stdin.write('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
  stdin.end();
  const code = await recorded;
  await writer.close();
  return { client, stderr, committed, code };
}

describe('stdio record: the tape first', () => {
  it('the client gets each answer only once its record is on the tape, over a slow store', async () => {
    const { client, committed } = await record(false);
    expect(client.onTapeWhenGot).toEqual([true, true]);
    expect(committed.map((ex) => (ex.response?.body as { json?: unknown }).json)).toEqual([
      { jsonrpc: '2.0', id: 1, result: { n: 1 } },
      { jsonrpc: '2.0', id: 2, result: { n: 2 } },
    ]);
  });

  it('a record the tape cannot take: the answer is not relayed, the relay stops and says why in one line', async () => {
    const { client, stderr } = await record(true);
    expect(client.text).toBe('');
    expect(stderr).toMatch(/the tape cannot be written .*the relay stops here/);
  });
});
