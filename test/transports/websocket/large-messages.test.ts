/**
 * Large WebSocket messages: held about once, not encoded several times over. Two 32 MiB Realtime audio appends (JSON
 * text, base64 audio) echoed through `tapedeck record` (its own process: its peak RSS is read from /proc) go to the
 * tape's side files as they are, are relayed byte for byte, and are replayed and matched with the upstream gone.
 * Messages from the upstream above `ws`'s client default (100 MiB) are relayed too, as the limit says (256 MiB).
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WebSocket } from 'ws';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { createPgStore } from '../../../src/tape/stores/postgres/pg-store.js';
import type { WsFrame } from '../../../src/tape/schema.js';
import { spawnCli, waitForListening } from '../../helpers/cli.js';
import { runCliInProcess } from '../../helpers/cli-in-process.js';
import { startWsUpstream } from '../../helpers/ws-upstream.js';

const MiB = 1024 * 1024;
const MAX = 256 * MiB;
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-large-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rssMb = (pid: number, field: 'VmRSS' | 'VmHWM'): number =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

/** A Realtime `input_audio_buffer.append` of `mib` MiB of JSON text (random audio in base64). */
function audioAppend(mib: number, n: number): string {
  const audio = randomBytes(Math.floor((mib * MiB * 3) / 4) - 96).toString('base64');
  return JSON.stringify({ type: 'input_audio_buffer.append', event_id: `event_${n}`, audio });
}

/** Send each message and wait for its echo; the echoes, as text. */
async function echoes(url: string, messages: string[]): Promise<string[]> {
  const ws = new WebSocket(url, { maxPayload: MAX });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const got: string[] = [];
  const all = new Promise<void>((resolve) =>
    ws.on('message', (d: Buffer) => {
      got.push(d.toString('utf8'));
      if (got.length === messages.length) resolve();
    }),
  );
  for (const m of messages) ws.send(m);
  await all;
  ws.close();
  await new Promise((r) => ws.once('close', r));
  return got;
}

const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

describe('large WebSocket messages', () => {
  it.skipIf(!existsSync('/proc/self/status'))(
    'two 32 MiB messages echoed: held about once (peak RSS), stored as they are, replayed and matched',
    async () => {
      const upstream = await startWsUpstream({ message: (c, _m, raw, binary) => c.ws.send(raw, { binary }) });
      const child = spawnCli(['record', '--tape', 'large', '--dir', dir, '--port', '0', '--route', `/openai=${upstream.url}`]);
      const url = `${(await waitForListening(child)).replace('http', 'ws')}/openai/v1/realtime?model=gpt-realtime`;
      const messages = [audioAppend(32, 1), audioAppend(32, 2)];
      const idle = rssMb(child.pid!, 'VmRSS');
      const back = await echoes(url, messages);
      const peak = rssMb(child.pid!, 'VmHWM');
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await upstream.close();
      expect(back.map(sha)).toEqual(messages.map(sha));
      // Each message passes through once each way (ws reads it into one buffer: ~2x while it arrives). Encoded as a
      // body it was held about five times over (base64 or JSON text, the serialised record, the bytes to store).
      expect(peak - idle).toBeLessThan(400);

      const tape = readFileSync(path.join(dir, 'large.jsonl'), 'utf8');
      expect(tape.length).toBeLessThan(64 * 1024);
      const frames = tape
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; frames?: WsFrame[] })
        .flatMap((r) => (r.type === 'frames' ? (r.frames ?? []) : []))
        .filter((f) => f.kind === 'text');
      expect(frames.map((f) => [f.data?.kind, (f.data as { encoding?: string }).encoding])).toEqual(Array(4).fill(['file', 'text']));
      const shas = (from: string): string[] => frames.filter((f) => f.from === from).map((f) => (f.data as { sha256: string }).sha256);
      expect(shas('client')).toEqual(messages.map(sha));
      expect(shas('server')).toEqual(messages.map(sha));

      const rep = await startProxy({
        mode: 'replay',
        tape: 'large',
        dir,
        port: 0,
        log: createLogger('silent'),
        routes: [],
        saveAs: 'large-replay',
      });
      const replayed = await echoes(`${rep.url.replace('http', 'ws')}/openai/v1/realtime?model=gpt-realtime`, messages);
      await rep.close();
      expect(replayed.map(sha)).toEqual(messages.map(sha));
    },
    // Slow on a loaded machine: 128 MiB through three processes, then replayed.
    180_000,
  );

  it('a message from the upstream above 100 MiB (the ws client default) reaches the client and the tape', async () => {
    const big = randomBytes(100 * MiB + 1);
    const upstream = await startWsUpstream({ open: (c) => c.ws.send(big, { binary: true }), message: () => undefined });
    const proxy = await startProxy({
      mode: 'record',
      tape: 'over-100',
      dir,
      port: 0,
      log: createLogger('silent'),
      routes: [{ prefix: '/up', upstream: upstream.url }],
    });
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/up/stream`, { maxPayload: MAX });
    const [got, closed] = await new Promise<[Buffer | undefined, number | undefined]>((resolve) => {
      ws.once('message', (d: Buffer) => resolve([d, undefined]));
      ws.once('close', (code) => resolve([undefined, code]));
    });
    expect(closed).toBeUndefined();
    expect(got?.equals(big)).toBe(true);
    ws.close();
    await new Promise((r) => ws.once('close', r));
    await proxy.close();
    await upstream.close();
    const lines = readFileSync(path.join(dir, 'over-100.jsonl'), 'utf8');
    expect(lines).toContain(sha(big));
  });

  it('a message too large to redact is stored as it came, and tapedeck scan reads it', async () => {
    const upstream = await startWsUpstream({ message: () => undefined });
    const proxy = await startProxy({
      mode: 'record',
      tape: 'large-secret',
      dir,
      port: 0,
      log: createLogger('silent'),
      routes: [{ prefix: '/up', upstream: upstream.url }],
    });
    const token = 'ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
    const message = JSON.stringify({ note: `use ${token}`, audio: randomBytes(13 * MiB).toString('base64') });
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/up/stream`);
    await new Promise((r) => ws.once('open', r));
    ws.send(message);
    ws.close();
    await new Promise((r) => ws.once('close', r));
    await proxy.close();
    await upstream.close();
    expect(upstream.received).toHaveLength(1);
    const r = await runCliInProcess(['scan', 'large-secret', '--dir', dir, '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).not.toContain(token);
    const findings = JSON.parse(r.stdout) as { exchange: string; path: string; rule: string }[];
    expect(findings).toEqual([
      expect.objectContaining({
        exchange: '000000',
        rule: 'github-pat',
        path: expect.stringMatching(/^frames\[0\]\.data\(side file large-secret\.files\/[0-9a-f]{64}\.txt\)/),
      }),
    ]);
  });

  const pgUrl = inject('pgUrl');
  it.skipIf(pgUrl === null)('in a PostgreSQL store: a 20 MiB binary message stored as it is, replayed byte for byte', async () => {
    const store = await createPgStore(`${pgUrl as string}?namespace=ws-large-${process.pid}`);
    const upstream = await startWsUpstream({ message: (c, _m, raw, binary) => c.ws.send(raw, { binary }) });
    const audio = randomBytes(20 * MiB);
    const talk = async (url: string): Promise<Buffer> => {
      const ws = new WebSocket(`${url.replace('http', 'ws')}/up/stream`, { maxPayload: MAX });
      await new Promise((r) => ws.once('open', r));
      const got = new Promise<Buffer>((resolve) => ws.once('message', (d: Buffer) => resolve(d)));
      ws.send(audio, { binary: true });
      const answer = await got;
      ws.close();
      await new Promise((r) => ws.once('close', r));
      return answer;
    };
    try {
      const log = createLogger('silent');
      const rec = await startProxy({
        mode: 'record',
        tape: 'pg-large',
        store,
        port: 0,
        log,
        routes: [{ prefix: '/up', upstream: upstream.url }],
      });
      expect((await talk(rec.url)).equals(audio)).toBe(true);
      await rec.close();
      await upstream.close();
      const rep = await startProxy({ mode: 'replay', tape: 'pg-large', store, port: 0, log, routes: [], saveAs: 'pg-large-replay' });
      expect((await talk(rep.url)).equals(audio)).toBe(true);
      await rep.close();
      const lines: string[] = [];
      for await (const r of store.lines('pg-large')) lines.push(r.text);
      const frames = lines.flatMap((l) => (JSON.parse(l) as { type: string; frames?: WsFrame[] }).frames ?? []);
      expect(frames.filter((f) => f.kind === 'binary').map((f) => [f.data?.kind, (f.data as { sha256?: string }).sha256])).toEqual([
        ['file', sha(audio)],
        ['file', sha(audio)],
      ]);
    } finally {
      await store.close();
    }
  });
});
