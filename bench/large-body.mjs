// Memory for huge bodies: the peak RSS of `tapedeck record` (its own process, VmHWM from /proc) while a 200 MB
// upload goes through it, and while a 200 MB download does, against the same proxy's RSS after small requests.
// Goal (issue 20): recording a 200 MB body keeps the proxy under 300 MB RSS. Then `tapedeck replay` of that tape:
// the upload matched by its hash and the download served, both streamed from the tape's side files.
// BENCH_LARGE_MB sets the body size (default 200).
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { start } from './proxy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'dist/cli/main.js');
const MB = Number(process.env.BENCH_LARGE_MB ?? 200);
const CHUNK = 1024 * 1024;

function rssMb(pid, field) {
  const file = `/proc/${pid}/status`;
  if (!existsSync(file)) return NaN;
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(file, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** One MiB of bytes that are not text, different per index (so no two chunks compress or hash alike). */
function chunk(i) {
  const out = Buffer.alloc(CHUNK);
  let x = (i + 1) * 2654435761;
  for (let o = 0; o < CHUNK; o += 4) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.writeUInt32LE(x, o);
  }
  return out;
}

/** An upstream that hashes an upload and answers its sha256, or streams `MB` MiB back for GET /download. */
function upstream() {
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': MB * CHUNK });
      let i = 0;
      const pump = () => {
        while (i < MB) if (!res.write(chunk(i++))) return void res.once('drain', pump);
        res.end();
      };
      return pump();
    }
    const hash = createHash('sha256');
    req.on('data', (c) => hash.update(c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ sha256: hash.digest('hex') }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}`, server })),
  );
}

/** Send `MB` MiB through the proxy (upload) or fetch them (download); resolves with the answer's sha256 and bytes. */
function transfer(url, method) {
  return new Promise((resolve, reject) => {
    const headers = method === 'POST' ? { 'content-type': 'application/octet-stream', 'content-length': MB * CHUNK } : {};
    const req = request(`${url}/up/${method === 'POST' ? 'upload' : 'download'}`, { method, headers }, (res) => {
      const hash = createHash('sha256');
      let bytes = 0;
      let text = '';
      res.on('data', (c) => {
        hash.update(c);
        bytes += c.byteLength;
        if (bytes < 10_000) text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode, sha256: hash.digest('hex'), bytes, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (method !== 'POST') return void req.end();
    let i = 0;
    const pump = () => {
      while (i < MB) if (!req.write(chunk(i++))) return void req.once('drain', pump);
      req.end();
    };
    pump();
  });
}

function expectedSha() {
  const hash = createHash('sha256');
  for (let i = 0; i < MB; i++) hash.update(chunk(i));
  return hash.digest('hex');
}

export async function run() {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-bench-large-'));
  const up = await upstream();
  const sha = expectedSha();
  const rows = [];
  try {
    const rec = await start([CLI, 'record', '--tape', 'large', '--dir', dir, '--port', '0', '--route', `/up=${up.url}`]);
    const idle = rssMb(rec.pid, 'VmRSS');
    const sent = await transfer(rec.url, 'POST');
    const afterUpload = rssMb(rec.pid, 'VmHWM');
    const got = await transfer(rec.url, 'GET');
    const afterDownload = rssMb(rec.pid, 'VmHWM');
    await rec.stop();
    if (sent.status !== 200 || JSON.parse(sent.text).sha256 !== sha || got.status !== 200 || got.sha256 !== sha)
      throw new Error('large-body bench: a transfer was not byte for byte');
    rows.push(
      ['record, idle', idle],
      [`record, ${MB} MB upload (peak)`, afterUpload],
      [`record, + ${MB} MB download (peak)`, afterDownload],
    );

    const play = await start([CLI, 'replay', '--tape', 'large', '--dir', dir, '--port', '0']);
    const loaded = rssMb(play.pid, 'VmRSS');
    const again = await transfer(play.url, 'POST');
    const replayPeak = rssMb(play.pid, 'VmHWM');
    const served = await transfer(play.url, 'GET');
    const servedPeak = rssMb(play.pid, 'VmHWM');
    await play.stop();
    if (again.status !== 200 || JSON.parse(again.text).sha256 !== sha || served.sha256 !== sha)
      throw new Error(`large-body bench: replay was not byte for byte (${again.status}, ${served.status})`);
    rows.push(
      [`replay, tape loaded`, loaded],
      [`replay, ${MB} MB upload matched (peak)`, replayPeak],
      [`replay, + ${MB} MB download served (peak)`, servedPeak],
    );
  } finally {
    up.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nLarge bodies (${MB} MB, proxy process RSS; goal: under 300 MB)\n`);
  console.log('| | RSS MB |');
  console.log('|---|---|');
  for (const [label, mb] of rows) console.log(`| ${label} | ${mb.toFixed(0)} |`);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
