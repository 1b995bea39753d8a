/**
 * The stdio replay in-process: the SDK client over `InMemoryTransport` and over in-memory streams read the way a pipe
 * is, and the line transport over in-memory streams (a stdout that reports back-pressure, a line over the limit),
 * against a tape in the in-memory store.
 */
import { PassThrough, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { PipeClientTransport } from '../../helpers/pipe-client-transport.js';
import { replayStdio, type StdioReplayOptions } from '../../../src/transports/stdio/replay.js';
import { createReplayMatcher } from '../../../src/replay/pipeline.js';
import { policyForTape } from '../../../src/replay/side-effects.js';
import type { TapeStore } from '../../../src/tape/store.js';
import type { LoadedTape } from '../../../src/tape/tape-reader.js';
import type { Exchange } from '../../../src/tape/schema.js';
import { log, NOTE, recordedTape, ROUTE, TOOLS } from './stdio-tape.js';

type Msg = { id?: unknown; method?: string; result?: unknown; error?: { code: number; message: string } };

async function replayOptions(store: TapeStore, tape: LoadedTape, saveAs: string) {
  const out = await store.openWriter({ name: saveAs, header: { mode: 'replay', routes: [] } });
  return {
    out,
    opts: {
      tape,
      name: ROUTE,
      matcher: (served: readonly Exchange[]) => createReplayMatcher(served),
      policy: policyForTape(tape.exchanges, undefined),
      onMiss: 'strict' as const,
      out,
      log,
    },
  };
}

/** A stdout that takes one chunk per timer tick and says so (`write` returns false past its small high-water mark). */
class SlowStdout extends Writable {
  text = '';
  maxBuffered = 0;
  constructor() {
    super({ highWaterMark: 256 });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.maxBuffered = Math.max(this.maxBuffered, this.writableLength);
    this.text += chunk.toString('utf8');
    setTimeout(done, 1);
  }
}

const lines = (text: string): Msg[] =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Msg);

describe('stdio replay with the SDK client over InMemoryTransport', () => {
  it('answers from the tape: tool list, a call with its progress first, a blocked side effect; the replay tape says why', async () => {
    const { store, tape } = await recordedTape();
    const { opts } = await replayOptions(store, tape, 'notes-replay');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const served = replayStdio({ ...opts, transport: serverSide });
    const client = new Client({ name: 'engine-test', version: '1' });
    await client.connect(clientSide);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    const progress: number[] = [];
    expect(
      await client.callTool({ name: 'read_note', arguments: { id: 'a' } }, undefined, { onprogress: (p) => progress.push(p.progress) }),
    ).toEqual(NOTE);
    expect(progress).toEqual([1]);
    const wipe = await client.callTool({ name: 'wipe_notes', arguments: {} });
    expect(wipe.isError).toBe(true);
    expect((wipe.content as { text: string }[])[0]?.text).toMatch(/tapedeck blocked the call to tool "wipe_notes"/);
    await client.close();
    expect(await served).toBe(0);
    const out = await store.load('notes-replay');
    expect(out.exchanges.map((ex) => [ex.mcp?.method, ex.match?.kind])).toEqual([
      ['initialize', 'semantic'],
      ['notifications/initialized', 'exact'],
      ['tools/list', 'exact'],
      ['tools/call', 'exact'],
      ['tools/call', 'blocked'],
    ]);
    expect(out.exchanges[4]?.notes).toMatchObject({ blocked: expect.stringMatching(/side effect/) });
  });

  it('a JSON-RPC batch gets one array of answers; its notifications are only accepted', async () => {
    const { store, tape } = await recordedTape();
    const { opts } = await replayOptions(store, tape, 'batch-replay');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const served = replayStdio({ ...opts, transport: serverSide });
    const got: unknown[] = [];
    clientSide.onmessage = (m) => void got.push(m);
    await clientSide.start();
    const batch = [
      { jsonrpc: '2.0', id: 7, method: 'tools/list' },
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'wipe_notes', arguments: {} } },
    ];
    await clientSide.send(batch as never);
    await expect.poll(() => got.length).toBe(1);
    await clientSide.close();
    await served;
    const answers = got[0] as Msg[];
    expect(answers.map((a) => a.id)).toEqual([7, 8]);
    expect(answers[0]?.result).toEqual({ tools: TOOLS });
    const out = await store.load('batch-replay');
    expect(out.exchanges.map((ex) => ex.match?.kind)).toEqual(['exact', 'exact', 'blocked']);
  });
});

describe("stdio replay serves the upstream's answers only", () => {
  it('an answer a fault rule injected while recording is on the tape, never served as the recording: the call is a miss saying why', async () => {
    const { store, tape } = await recordedTape();
    // The read_note call's answer was a tool error a rule injected (as a run with --fault records it), not the server's.
    const injected: LoadedTape = {
      ...tape,
      exchanges: tape.exchanges.map((ex): Exchange => {
        const m = ex.request.body.kind === 'json' ? (ex.request.body.json as { method?: string }) : undefined;
        if (m?.method !== 'tools/call') return ex;
        return {
          ...ex,
          match: { kind: 'fault', reason: 'injected by fault rule #1 tool read_note -> tool error' },
          notes: { fault: '#1' },
        };
      }),
    };
    const { opts } = await replayOptions(store, injected, 'injected-replay');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const served = replayStdio({ ...opts, transport: serverSide });
    const client = new Client({ name: 'engine-test', version: '1' });
    await client.connect(clientSide);
    const err = await client.callTool({ name: 'read_note', arguments: { id: 'a' } }).catch((e: unknown) => e);
    await client.close();
    expect(await served).toBe(0);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/no recording|miss|not/i);
    const out = await store.load('injected-replay');
    const call = out.exchanges.find((ex) => ex.mcp?.method === 'tools/call');
    expect(call?.match?.kind).toBe('miss');
  });
});

describe('stdio replay over stdin and stdout', () => {
  it("a call's progress reaches the SDK client whole: its answer never comes in the same read as its notifications", async () => {
    const { store, tape } = await recordedTape();
    const { opts } = await replayOptions(store, tape, 'progress-replay');
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const served = replayStdio({ ...opts, stdin, stdout });
    const client = new Client({ name: 'pipe-test', version: '1' });
    await client.connect(new PipeClientTransport(stdin, stdout));
    const progress: number[] = [];
    for (let i = 0; i < 3; i++)
      expect(
        await client.callTool({ name: 'read_note', arguments: { id: 'a' } }, undefined, { onprogress: (p) => progress.push(p.progress) }),
      ).toEqual(NOTE);
    // Written together, a notification and its answer are read together, and the SDK drops the notification.
    expect(progress).toEqual([1, 1, 1]);
    await client.close();
    expect(await served).toBe(0);
  });

  it('waits for drain when stdout reports back-pressure: at most one answer beyond its buffer, in order, none lost', async () => {
    const { store, tape } = await recordedTape();
    const { opts } = await replayOptions(store, tape, 'drain-replay');
    const stdin = new PassThrough();
    const stdout = new SlowStdout();
    const served = replayStdio({ ...opts, stdin, stdout } satisfies StdioReplayOptions);
    const n = 40;
    stdin.end(Array.from({ length: n }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' }) + '\n').join(''));
    expect(await served).toBe(0);
    await expect.poll(() => stdout.writableLength).toBe(0);
    const answers = lines(stdout.text);
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(answers.every((a) => JSON.stringify(a.result) === JSON.stringify({ tools: TOOLS }))).toBe(true);
    const answerBytes = Buffer.byteLength(JSON.stringify(answers[0]) + '\n');
    // Without waiting for drain every answer piles up in stdout's buffer (40 answers here).
    expect(stdout.maxBuffered).toBeLessThanOrEqual(stdout.writableHighWaterMark + answerBytes);
  });

  it('refuses a line over the limit with a parse error and one line on stderr, without keeping it, and reads on', async () => {
    const { store, tape } = await recordedTape();
    const { opts } = await replayOptions(store, tape, 'cap-replay');
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let text = '';
    let errText = '';
    stdout.on('data', (d: Buffer) => (text += d.toString()));
    stderr.on('data', (d: Buffer) => (errText += d.toString()));
    const served = replayStdio({ ...opts, stdin, stdout, stderr, maxLineBytes: 1024 });
    const long = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'read_note', arguments: { id: 'x'.repeat(4000) } },
    });
    // The long line comes in pieces, the next line in the same chunk as its end.
    stdin.write(long.slice(0, 700));
    stdin.write(long.slice(700, 2000));
    stdin.write(long.slice(2000) + '\n' + JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list' }) + '\n');
    stdin.end();
    expect(await served).toBe(0);
    const [refused, next, ...rest] = lines(text);
    expect(refused).toMatchObject({ id: null, error: { code: -32700, message: expect.stringMatching(/longer than 1 KB/) } });
    expect(next).toMatchObject({ id: 10, result: { tools: TOOLS } });
    expect(rest).toEqual([]);
    expect(errText.trim().split('\n')).toEqual([expect.stringMatching(/the client sent a line longer than 1 KB/)]);
    const out = await store.load('cap-replay');
    expect(out.exchanges.map((ex) => [ex.request.body.kind, ex.match?.kind])).toEqual([
      ['empty', 'miss'],
      ['json', 'exact'],
    ]);
  });
});
