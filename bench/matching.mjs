// Matching: tape load time and memory, and exact / similarity / miss lookup latency (p50, p99) for tapes of
// 1k, 10k and 100k exchanges. Worst case on purpose: every exchange is in one bucket (same model, same
// parameters, same system prompt), so similarity has to find the right one among all of them.
// Each size runs in its own process (`--expose-gc`), so memory is measured on a clean heap.
// Then long prompts: 40 recordings of 2,100 words in one bucket, and requests of 2,100 words that miss (or, once,
// match) among them: the time each takes and the event loop's longest block meanwhile.
import { spawn } from 'node:child_process';
import { PerformanceObserver } from 'node:perf_hooks';
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
  const { createTapeWriter } = await import('../dist/tape/stores/tape-writer.js');
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

/** Words for long prompts: made-up, letters only, many of them rare (as a long document's words are). */
function longTexts(count, words) {
  let seed = 7;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'shi', 'pen', 'dar', 'gul', 'fre', 'bis', 'tor', 'qua', 'len'];
  const vocab = Array.from({ length: 5000 }, () =>
    Array.from({ length: 2 + Math.floor(rnd() * 3) }, () => syllables[Math.floor(rnd() * syllables.length)]).join(''),
  );
  const common = ['the', 'of', 'and', 'to', 'in', 'a', 'is', 'for', 'on', 'with'];
  const doc = () => {
    const out = [];
    for (let i = 0; i < words; i++) {
      let w = rnd() < 0.3 ? common[Math.floor(rnd() * common.length)] : vocab[Math.floor(rnd() ** 2 * vocab.length)];
      if (i % 15 === 0) w = w[0].toUpperCase() + w.slice(1);
      out.push(i % 15 === 14 ? `${w}.` : w);
    }
    return out;
  };
  return Array.from({ length: count }, doc);
}

/** In the child: misses (and one similar request) among 40 long recordings in one bucket. */
async function measureLong() {
  const { createReplayMatcher } = await import('../dist/replay/pipeline.js');
  const RECORDINGS = 40;
  const WORDS = 2100;
  const docs = longTexts(RECORDINGS + 20, WORDS);
  const exchanges = docs.slice(0, RECORDINGS).map((words, i) => ({
    type: 'exchange',
    id: String(i).padStart(6, '0'),
    seq: i,
    startedAt: new Date(0).toISOString(),
    offsetMs: i,
    transport: 'http',
    route: '/openai',
    request: { method: 'POST', path: '/v1/chat/completions', query: [], headers: {}, body: { kind: 'json', json: body(words.join(' ')) } },
    response: { status: 200, headers: {}, body: { kind: 'json', json: { id: `c${i}` } } },
    timing: { durationMs: 1 },
  }));
  const matcher = createReplayMatcher(exchanges, { eager: true });
  const edit = (words, every, to) => words.map((w, i) => (i % every === every - 1 ? to(w, i) : w));
  const kinds = {
    // A prompt no recording resembles: most of its words differ.
    'another prompt': (k) => docs[RECORDINGS + (k % 20)],
    // A recording with one word replaced in its middle: aligned, refused as a word that differs.
    'one word changed': (k) => docs[k % RECORDINGS].map((w, i) => (i === WORDS / 2 ? 'zorblax' : w)),
    // A recording with 30 words replaced all along it: as many changes as are aligned before giving up.
    '30 words changed': (k) => edit(docs[k % RECORDINGS], 70, (w, i) => `zq${i}`),
    // A recording's two halves swapped: every word there, in another order.
    'halves swapped': (k) => [...docs[k % RECORDINGS].slice(WORDS / 2), ...docs[k % RECORDINGS].slice(0, WORDS / 2)],
  };
  // A served request too: a recording with one "the" dropped.
  kinds['served (one "the" dropped)'] = (k) => {
    const words = [...docs[k % RECORDINGS]];
    words.splice(words.indexOf('the'), 1);
    return words;
  };
  // Warm up first (the first requests compile the code on the path): the rows are for a process already serving.
  for (const make of Object.values(kinds)) for (let k = 0; k < 3; k++) await matcher.match(incoming(make(k + 20).join(' ')));
  const rows = {};
  const ticker = loopTicker();
  for (const [kind, make] of Object.entries(kinds)) {
    const wall = [];
    const cpu = [];
    for (let k = 0; k < 20; k++) {
      const req = incoming(make(k).join(' '));
      const s = performance.now();
      const c = process.cpuUsage();
      const out = await matcher.match(req);
      wall.push(performance.now() - s);
      cpu.push(process.cpuUsage(c).user / 1000);
      const expected = kind.startsWith('served') ? 'semantic' : 'miss';
      if (out.kind !== expected) throw new Error(`${kind}: expected ${expected}, got ${out.kind} (${out.explanation})`);
    }
    rows[kind] = { ...percentiles(wall), cpu50: percentiles(cpu).p50 };
  }
  return { rows, ...ticker.stop() };
}

/**
 * The event loop's longest block while the requests run: a task that runs on every turn of the loop records the gap
 * since its last turn, in wall time and in CPU time, and how much of it the garbage collector took (the `gc`
 * performance entries that fall inside it). On a busy machine the wall gap also holds time the process was not
 * scheduled; the CPU gap is the work that held the loop.
 */
function loopTicker() {
  const gcs = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push([e.startTime, e.startTime + e.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  const gaps = [];
  let wall = performance.now();
  let cpu = process.cpuUsage();
  let running = true;
  const tick = () => {
    const w = performance.now();
    const c = process.cpuUsage();
    gaps.push({ from: wall, to: w, cpu: (c.user + c.system - cpu.user - cpu.system) / 1000 });
    wall = w;
    cpu = c;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop: () => {
      running = false;
      observer.disconnect();
      const gcIn = (g) => gcs.reduce((n, [a, b]) => n + Math.max(0, Math.min(b, g.to) - Math.max(a, g.from)), 0);
      const longest = gaps.reduce((m, g) => (g.to - g.from > m.to - m.from ? g : m), gaps[0]);
      const longestCpu = gaps.reduce((m, g) => (g.cpu > m.cpu ? g : m), gaps[0]);
      const ours = gaps.reduce((m, g) => Math.max(m, g.to - g.from - gcIn(g)), 0);
      return {
        longestBlockMs: longest.to - longest.from,
        longestBlockGcMs: gcIn(longest),
        longestBlockCpuMs: longestCpu.cpu,
        longestWithoutGcMs: ours,
      };
    },
  };
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
  for (const size of SIZES.filter((n) => n > 0)) {
    const r = await runChild(size);
    console.log(
      `${String(r.size).padStart(8)} ${ms(r.loadMs)}  ${ms(r.indexMs)} ${r.heapMb.toFixed(0).padStart(8)} | ` +
        `${ms(r.exact.p50)} ${ms(r.exact.p99)} | ${ms(r.similar.p50)} ${ms(r.similar.p99)} | ${ms(r.miss.p50)} ${ms(r.miss.p99)}`,
    );
  }
  const long = await runChild('long');
  console.log('\nlong prompts: a request of 2,100 words among 40 recordings of 2,100 words in one bucket (20 requests each)');
  console.log('                              p50 ms   p99 ms  CPU p50 ms');
  for (const [kind, r] of Object.entries(long.rows)) console.log(`  ${kind.padEnd(26)} ${ms(r.p50)} ${ms(r.p99)}    ${ms(r.cpu50)}`);
  console.log(
    `  event loop's longest block: ${long.longestBlockMs.toFixed(1)} ms (garbage collection ${long.longestBlockGcMs.toFixed(1)} ms of it); ` +
      `longest without garbage collection ${long.longestWithoutGcMs.toFixed(1)} ms; most CPU between two turns ${long.longestBlockCpuMs.toFixed(1)} ms`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === 'long') console.log(JSON.stringify(await measureLong()));
  else if (process.argv[2] !== undefined) console.log(JSON.stringify(await measure(Number(process.argv[2]))));
  else await run();
}
