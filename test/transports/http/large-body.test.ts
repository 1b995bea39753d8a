/**
 * Bounded memory for huge bodies: a 48 MiB upload streams into the tape's store while the client is still sending
 * it, the upstream's echo of it streams into the store while the upstream is still sending it, and both replay
 * byte for byte (sha256 compared), with the folder store and the memory store.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startProxy } from '../../../src/front/server.js';
import { createDirStore } from '../../../src/tape/stores/dir-store.js';
import { STREAMED_BODY_BYTES } from '../../../src/tape/large-body.js';
import { createMemoryStore } from '../../../src/tape/stores/memory-store.js';
import type { TapeStore } from '../../../src/tape/store.js';
import { answerDigest, type AnswerDigest } from '../../helpers/answer-digest.js';

const MiB = 1024 * 1024;
const SIZE = 48 * MiB;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Bytes that are not UTF-8 (binary upload), or UTF-8 text with multi-byte characters split across chunks. */
function payload(kind: 'binary' | 'text'): Buffer {
  const unit = 'héllo wörld ✓ 𝄞 ';
  if (kind === 'text') return Buffer.from(unit.repeat(Math.floor(SIZE / Buffer.byteLength(unit))), 'utf8');
  const out = Buffer.alloc(SIZE);
  let x = 0x12345678;
  for (let i = 0; i < SIZE; i += 4) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.writeUInt32LE(x, i);
  }
  return out;
}

/** A store whose blob sinks count the bytes they are fed: what reached the store so far. */
function counting(store: TapeStore): { store: TapeStore; stored: () => number } {
  let bytes = 0;
  const wrapped: TapeStore = Object.create(store) as TapeStore;
  wrapped.blobSink = (name) => {
    const sink = store.blobSink(name);
    return {
      write(chunk) {
        bytes += chunk.byteLength;
        sink.write(chunk);
      },
      end: (encoding) => sink.end(encoding),
      abort: () => sink.abort(),
    };
  };
  return { store: wrapped, stored: () => bytes };
}

/**
 * An upstream that echoes the upload (same content type) once it has it all, holding back the second half of its
 * answer until `release` is called.
 */
async function startEcho(): Promise<{ url: string; seen: string[]; release: () => void; close: () => Promise<void> }> {
  const seen: string[] = [];
  let release = (): void => undefined;
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push(sha(body));
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/octet-stream', 'content-length': body.byteLength });
      const half = Math.floor(body.byteLength / 2);
      res.write(body.subarray(0, half));
      const gate = new Promise<void>((resolve) => (release = resolve));
      void gate.then(() => res.end(body.subarray(half)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    release: () => release(),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Upload `body` in two halves; the second goes only once `beforeSecondHalf` resolves. Resolves with the answer's
 * status, match header and sha256.
 */
function upload(url: string, body: Buffer, contentType: string, beforeSecondHalf: () => Promise<void>): Promise<AnswerDigest> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/up/upload`,
      { method: 'POST', headers: { 'content-type': contentType, 'content-length': body.byteLength } },
      (res) => void answerDigest(res).then(resolve, reject),
    );
    req.on('error', reject);
    const half = Math.floor(body.byteLength / 2);
    req.write(body.subarray(0, half));
    beforeSecondHalf().then(() => req.end(body.subarray(half)), reject);
  });
}

describe.each([
  ['folder', 'binary'],
  ['memory', 'text'],
] as const)('a %s store, a huge %s upload', (kind, content) => {
  it('streams into the store as it comes, and replays byte for byte', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-large-'));
    dirs.push(dir);
    const { store, stored } = counting(kind === 'folder' ? createDirStore(dir) : createMemoryStore());
    const body = payload(content);
    const digest = sha(body);
    const contentType = content === 'text' ? 'text/plain; charset=utf-8' : 'application/octet-stream';
    const echo = await startEcho();
    const routes = [{ prefix: '/up', upstream: echo.url }];
    try {
      const rec = await startProxy({ mode: 'record', tape: 'upload', store, port: 0, routes });
      let answer;
      try {
        const answered = upload(rec.url, body, contentType, async () => {
          // Half the upload is in and more than the limit of it: it is in the store already, not in memory.
          await vi.waitFor(() => expect(stored()).toBeGreaterThan(STREAMED_BODY_BYTES), { timeout: 20_000, interval: 50 });
        });
        // The upstream has sent half its answer: that half is in the store while the rest has not come yet.
        await vi.waitFor(() => expect(stored()).toBeGreaterThan(body.byteLength + STREAMED_BODY_BYTES), { timeout: 30_000, interval: 50 });
        echo.release();
        answer = await answered;
      } finally {
        await rec.close();
      }
      expect(answer).toMatchObject({ status: 200, bytes: body.byteLength, sha256: digest });
      expect(echo.seen).toEqual([digest]);

      // On the tape: both bodies stored apart, by their sha256, exactly as they came.
      const tape = await store.load('upload', { resolveFiles: false });
      const [ex] = tape.exchanges;
      const encoding = content === 'text' ? 'text' : 'base64';
      expect(ex?.request.body).toMatchObject({ kind: 'file', encoding, bytes: body.byteLength, sha256: digest });
      expect(ex?.response?.body).toMatchObject({ kind: 'file', encoding, bytes: body.byteLength, sha256: digest });

      // Replayed: matched by the upload's hash, answered byte for byte, the upstream not asked again.
      const play = await startProxy({ mode: 'replay', tape: 'upload', store, port: 0, routes, onMiss: 'strict' });
      try {
        const again = await upload(play.url, body, contentType, () => Promise.resolve());
        expect(again).toMatchObject({ status: 200, sha256: digest });
        expect(again.match).not.toBe('miss');
        expect(echo.seen).toHaveLength(1);
        // A different upload of the same size is a miss, not the recorded answer.
        const other = Buffer.from(body);
        other[100] = (other[100] as number) ^ 1;
        const missed = await upload(play.url, other, contentType, () => Promise.resolve());
        expect(missed.match).toBe('miss');
      } finally {
        await play.close();
      }
      // The replay tape holds its own copy of both bodies, readable from it alone.
      const replayTape = await store.load(play.writer.name, { resolveFiles: false });
      expect(replayTape.exchanges.map((e) => e.match?.kind).sort()).toEqual(['exact', 'miss']);
      const served = replayTape.exchanges.find((e) => e.match?.kind === 'exact');
      expect(served?.request.body).toMatchObject({ kind: 'file', sha256: digest });
      const copy = served?.response?.body;
      expect(copy).toMatchObject({ kind: 'file', sha256: digest, file: expect.stringContaining(play.writer.name) as string });
      if (copy?.kind !== 'file') throw new Error('not stored apart');
      const hash = createHash('sha256');
      for await (const chunk of store.openBlob(play.writer.name, copy)) hash.update(chunk as Buffer);
      expect(hash.digest('hex')).toBe(digest);
    } finally {
      echo.release();
      await echo.close();
      await store.close();
    }
  }, 120_000);
});

describe('a huge upload the client abandons', () => {
  it('leaves nothing half-stored, and the proxy keeps serving', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-large-'));
    dirs.push(dir);
    const { store, stored } = counting(createDirStore(dir));
    const echo = await startEcho();
    const rec = await startProxy({ mode: 'record', tape: 'gone', store, port: 0, routes: [{ prefix: '/up', upstream: echo.url }] });
    try {
      const req = request(`${rec.url}/up/upload`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-length': SIZE },
      });
      req.on('error', () => undefined);
      req.write(Buffer.alloc(STREAMED_BODY_BYTES + MiB, 1));
      await vi.waitFor(() => expect(stored()).toBeGreaterThan(STREAMED_BODY_BYTES), { timeout: 20_000, interval: 50 });
      req.destroy();
      const side = path.join(dir, 'gone.files');
      await vi.waitFor(() => expect(existsSync(side) ? readdirSync(side) : []).toEqual([]), { timeout: 10_000, interval: 50 });
      expect(echo.seen).toEqual([]);
      // The next upload goes through as usual.
      const answered = upload(rec.url, Buffer.from('hello'), 'text/plain', () => Promise.resolve());
      await vi.waitFor(() => expect(echo.seen).toHaveLength(1), { timeout: 10_000, interval: 20 });
      echo.release();
      expect(await answered).toMatchObject({ status: 200, bytes: 5 });
    } finally {
      echo.release();
      await rec.close();
      await echo.close();
      await store.close();
    }
  }, 60_000);
});
