// Matching: tape load time and memory, and exact / similarity / miss lookup latency (p50, p99) for tapes of
// 1k, 10k and 100k exchanges. Worst case on purpose: every exchange is in one bucket (same model, same
// parameters, same system prompt), so similarity has to find the right one among all of them.
// Each size runs in its own process (`--expose-gc`), so memory is measured on a clean heap.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SIZES = (process.env.BENCH_MATCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const LOOKUPS = Number(process.env.BENCH_MATCH_LOOKUPS ?? 2000);

const TOPICS = ['billing', 'login', 'shipping', 'refund', 'password', 'invoice', 'delivery', 'account', 'upgrade', 'cancellation'];
const SYSTEM = 'You are the support assistant of Acme. Answer in two sentences, cite the ticket, never invent order data.';
const question = (i, verb = 'summarise') =>
  `Please ${verb} support ticket ${i} about the ${TOPICS[i % TOPICS.length]} problem reported by customer ${i * 7}`;
const body = (text) => ({
  model: 'gpt-4o-mini',
  temperature: 0,
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: text },
  ],
});
const incoming = (text) => ({
  route: '/openai',
  request: { method: 'POST', path: '/v1/chat/completions', query: [], body: { kind: 'json', json: body(text) } },
});

function percentiles(samples) {
  samples.sort((a, b) => a - b);
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(samples.length * q))];
  return { p50: at(0.5), p99: at(0.99) };
}

/** In the child: one size, printed as JSON. */
async function measure(size) {
  const { createTapeWriter } = await import('../dist/tape/tape-writer.js');
  const { loadTape } = await import('../dist/tape/tape-reader.js');
  const { createReplayMatcher } = await import('../dist/replay/pipeline.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-bench-match-'));
  try {
    const writer = await createTapeWriter({
      dir,
      name: 'big',
      ifExists: 'overwrite',
      header: { mode: 'record', routes: [{ prefix: '/openai', upstream: 'http://127.0.0.1:1' }] },
    });
    for (let i = 0; i < size; i++) {
      const text = question(i);
      void writer.append({
        startedAt: new Date().toISOString(),
        offsetMs: i,
        transport: 'http',
        route: '/openai',
        request: {
          method: 'POST',
          path: '/v1/chat/completions',
          query: [],
          headers: { 'content-type': 'application/json' },
          body: { kind: 'json', json: body(text) },
        },
        response: {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: {
            kind: 'json',
            json: {
              id: `c${i}`,
              object: 'chat.completion',
              choices: [{ index: 0, message: { role: 'assistant', content: `Ticket ${i}: resolved.` }, finish_reason: 'stop' }],
            },
          },
        },
        timing: { durationMs: 1 },
      });
    }
    await writer.close();

    globalThis.gc();
    const before = process.memoryUsage().heapUsed;
    let t0 = performance.now();
    const tape = await loadTape(dir, 'big');
    const loadMs = performance.now() - t0;
    t0 = performance.now();
    const matcher = createReplayMatcher(tape.exchanges, { eager: true });
    const indexMs = performance.now() - t0;
    globalThis.gc();
    const heapMb = (process.memoryUsage().heapUsed - before) / 1024 / 1024;

    const pick = (k) => (k * 7919) % size;
    const time = async (n, make, expectKind) => {
      const samples = [];
      for (let k = 0; k < n; k++) {
        const req = make(pick(k));
        const s = performance.now();
        const out = await matcher.match(req);
        samples.push(performance.now() - s);
        if (out.kind !== expectKind) throw new Error(`expected ${expectKind}, got ${out.kind} (${out.explanation})`);
      }
      return percentiles(samples);
    };
    const exact = await time(LOOKUPS, (i) => incoming(question(i)), 'exact');
    // A spelling variant of a recorded question: exact misses, similarity finds it among `size` candidates.
    const similar = await time(Math.min(LOOKUPS, 500), (i) => incoming(question(i, 'summarize')), 'semantic');
    // A question the tape does not have (a number no recording has): every stage runs, then the miss report.
    const miss = await time(Math.min(LOOKUPS, 200), (i) => incoming(question(i + size * 3)), 'miss');
    return { size, loadMs, indexMs, heapMb, exact, similar, miss };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runChild(size) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), String(size)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`matching bench for ${size} exited with ${code}`)),
    );
  });
}

export async function run() {
  const ms = (x) => x.toFixed(x < 10 ? 2 : 0).padStart(8);
  console.log('\nmatching (one bucket of N exchanges: worst case for similarity)');
  console.log('       N   load ms  index ms  heap MB | exact p50    p99 | similar p50    p99 |  miss p50    p99');
  for (const size of SIZES) {
    const r = await runChild(size);
    console.log(
      `${String(r.size).padStart(8)} ${ms(r.loadMs)}  ${ms(r.indexMs)} ${r.heapMb.toFixed(0).padStart(8)} | ` +
        `${ms(r.exact.p50)} ${ms(r.exact.p99)} | ${ms(r.similar.p50)} ${ms(r.similar.p99)} | ${ms(r.miss.p50)} ${ms(r.miss.p99)}`,
    );
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] !== undefined) console.log(JSON.stringify(await measure(Number(process.argv[2]))));
  else await run();
}
