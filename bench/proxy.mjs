// Proxy overhead: throughput and latency straight to a local upstream vs through `tapedeck record` and
// `tapedeck replay`, each server in its own process, the load from this one (undici, keep-alive).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4000);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 1500);
const PROMPTS = 50; // distinct requests, cycled: replay answers each from its own recording

function start(args) {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1], stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

let STREAM = false;
const body = (i) => JSON.stringify({ model: 'bench-model', stream: STREAM, messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: `Question number ${i % PROMPTS}: what is ${i % PROMPTS} squared?` }] });

async function once(pool, pathPrefix, i) {
  const t0 = performance.now();
  const res = await pool.request({ method: 'POST', path: `${pathPrefix}/v1/chat/completions`, headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' }, body: body(i) });
  await res.body.text();
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  return performance.now() - t0;
}

/** Sequential requests: latency without queueing. */
async function latency(url, prefix) {
  const pool = new Pool(url, { connections: 1 });
  for (let i = 0; i < 200; i++) await once(pool, prefix, i); // warm-up
  const samples = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) samples.push(await once(pool, prefix, i));
  await pool.close();
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length * 0.5)], p99: samples[Math.floor(samples.length * 0.99)] };
}

/** CONCURRENCY workers for DURATION_MS: requests per second. */
async function throughput(url, prefix) {
  const pool = new Pool(url, { connections: CONCURRENCY });
  let done = 0;
  const until = performance.now() + DURATION_MS;
  let i = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < until) {
      await once(pool, prefix, i++);
      done++;
    }
  }));
  await pool.close();
  return (done / DURATION_MS) * 1000;
}

async function workload(cli, dir, upstream, stream) {
  STREAM = stream;
  const rows = [];
  const straight = { name: 'straight', lat: await latency(upstream.url, ''), rps: await throughput(upstream.url, '') };
  rows.push(straight);
  const tape = stream ? 'bench-sse' : 'bench-json';
  const rec = await start([cli, 'record', '--tape', tape, '--dir', dir, '--port', '0', '--route', `/llm=${upstream.url}`, '--overwrite']);
  rows.push({ name: 'record', lat: await latency(rec.url, '/llm'), rps: await throughput(rec.url, '/llm') });
  await rec.stop();
  const rep = await start([cli, 'replay', '--tape', tape, '--dir', dir, '--port', '0', '--save-as', `${tape}-replay`]);
  rows.push({ name: 'replay', lat: await latency(rep.url, '/llm'), rps: await throughput(rep.url, '/llm') });
  await rep.stop();

  console.log(`\n${stream ? 'streamed (SSE, ~15 events per answer)' : 'non-streamed JSON'} chat completions: ${CONCURRENCY} connections for ${DURATION_MS} ms; ${LATENCY_SAMPLES} sequential requests for latency`);
  console.log('mode       req/s    vs straight   p50 ms   p99 ms   added p50 ms');
  for (const r of rows) {
    console.log(`${r.name.padEnd(8)} ${r.rps.toFixed(0).padStart(7)}   ${(r.rps / straight.rps).toFixed(2).padStart(8)}x   ${r.lat.p50.toFixed(3).padStart(6)}   ${r.lat.p99.toFixed(3).padStart(6)}   ${(r.lat.p50 - straight.lat.p50).toFixed(3).padStart(8)}`);
  }
  const [, rec2, rep2] = rows;
  console.log(`targets: record >= 0.5x straight: ${rec2.rps / straight.rps >= 0.5 ? 'met' : 'NOT met'}; replay >= 1x straight: ${rep2.rps / straight.rps >= 1 ? 'met' : 'NOT met'}; added p50 < 1 ms: ${rec2.lat.p50 - straight.lat.p50 < 1 && rep2.lat.p50 - straight.lat.p50 < 1 ? 'met' : 'NOT met'}`);
}

export async function run() {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-bench-'));
  const cli = path.join(ROOT, 'dist/cli/main.js');
  const upstream = await start([path.join(ROOT, 'bench/upstream-server.mjs')]);
  console.log('proxy overhead: a scripted OpenAI-compatible upstream, tapedeck and the load generator each in their own process on this machine');
  try {
    await workload(cli, dir, upstream, false);
    await workload(cli, dir, upstream, true);
  } finally {
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
