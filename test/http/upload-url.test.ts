/**
 * A resumable upload's absolute URL (`X-Goog-Upload-URL`, `Location`) comes back through the route in base-URL mode,
 * so the upload's next request is recorded too, and replayed with the upstream gone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/front/server.js';
import { readTape } from '../../src/tape/tape-reader.js';
import { startLocalServer, type LocalServer } from '../helpers/local-server.js';

let dir: string;
let upstream: LocalServer;
let upstreamUrl: string;
const hits: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-upload-'));
  upstream = await startLocalServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      if (req.url === '/upload/v1beta/files') {
        res.writeHead(200, {
          'x-goog-upload-url': `${upstreamUrl}/upload/v1beta/files?upload_id=abc&upload_protocol=resumable`,
          'x-goog-upload-status': 'active',
        });
        return void res.end();
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-goog-upload-status': 'final' });
      res.end(JSON.stringify({ file: { name: 'files/abc', uri: 'https://files.example/abc' } }));
    });
  });
  upstreamUrl = upstream.url;
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Start an upload, then send its bytes where the first answer says. */
async function upload(base: string): Promise<{ next: string; file: unknown }> {
  const start = await fetch(`${base}/gemini/upload/v1beta/files`, {
    method: 'POST',
    headers: { 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start' },
    body: '{}',
  });
  const next = start.headers.get('x-goog-upload-url') ?? '';
  const done = await fetch(next, {
    method: 'POST',
    headers: { 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': '0' },
    body: 'hello',
  });
  return { next, file: await done.json() };
}

describe('upload URLs in base-URL mode', () => {
  it('rewrites X-Goog-Upload-URL to come back through the route, in record and in replay', async () => {
    const routes = [{ prefix: '/gemini', upstream: upstreamUrl }];
    const rec = await startProxy({ mode: 'record', tape: 'upload', dir, port: 0, routes });
    let recorded: { next: string; file: unknown };
    try {
      recorded = await upload(rec.url);
      expect(recorded.next).toBe(`${rec.url}/gemini/upload/v1beta/files?upload_id=abc&upload_protocol=resumable`);
    } finally {
      await rec.close();
    }
    expect(hits).toEqual(['POST /upload/v1beta/files', 'POST /upload/v1beta/files?upload_id=abc&upload_protocol=resumable']);
    // The tape keeps what the upstream said.
    const tape = await readTape(path.join(dir, 'upload.jsonl'));
    expect(tape.exchanges[0]?.response?.headers['x-goog-upload-url']).toBe(
      `${upstreamUrl}/upload/v1beta/files?upload_id=abc&upload_protocol=resumable`,
    );
    const rep = await startProxy({ mode: 'replay', tape: 'upload', dir, port: 0, routes });
    try {
      const again = await upload(rep.url);
      expect(again.next).toBe(`${rep.url}/gemini/upload/v1beta/files?upload_id=abc&upload_protocol=resumable`);
      expect(again.file).toEqual(recorded.file);
    } finally {
      await rep.close();
    }
    expect(hits).toHaveLength(2);
  });
});
