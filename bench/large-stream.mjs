// Memory for huge event streams: the peak RSS of `tapedeck record` (its own process, VmHWM from /proc) while a
// BENCH_STREAM_MB (default 300) MiB SSE answer goes through it to a client that reads it; then `tapedeck replay` of
// that tape, first to a client that reads nothing for BENCH_IDLE_S seconds (default 5: what the replay holds for a
// client that never reads), then to one that reads it all (checked byte for byte by sha256); then `show`, `diff` and
// `export --format har` of the tape (each its own process: seconds and peak RSS from /usr/bin/time).
// BENCH_CLI runs another build (e.g. a checkout of the commit before, to measure "before");
// BENCH_RECORD_CLI records with one build and replays with BENCH_CLI (an older tape, its events in its line).
// Replay start: `tapedeck replay` of the tape started BENCH_ROUNDS times (default 3): seconds until it listens, its RSS
// then and its peak while loading, the medians, beside a replay of a tape with no exchange (what a replay costs
// without them); BENCH_BASELINE=DIR (another checkout with its dist/ built) adds its rows, the two alternated.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { start } from './proxy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = process.env.BENCH_CLI ?? path.join(ROOT, 'dist/cli/main.js');
const RECORD_CLI = process.env.BENCH_RECORD_CLI ?? CLI;
const MB = Number(process.env.BENCH_STREAM_MB ?? 300);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BASELINE = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE, 'dist/cli/main.js') : undefined;

function rssMb(pid, field) {
  const file = `/proc/${pid}/status`;
  if (!existsSync(file)) return NaN;
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(file, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Event `i` of the stream: an OpenAI chat-completion chunk; the stream is `count` of them, then usage and [DONE]. */
const event = (i) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', model: 'bench-model', choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] })}\n\n`;
const count = Math.ceil((MB * 1024 * 1024) / Buffer.byteLength(event(500_000)));
const last = [
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', model: 'bench-model', choices: [], usage: { prompt_tokens: 9, completion_tokens: count, total_tokens: count + 9 } })}\n\n`,
  'data: [DONE]\n\n',
];

function expectedSha() {
  const hash = createHash('sha256');
  for (let i = 0; i < count; i++) hash.update(event(i));
  for (const e of last) hash.update(e);
  return hash.digest('hex');
}

/** An upstream that streams the events at its client's pace, 64 KiB a write. */
function upstream() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let i = 0;
      const pump = () => {
        while (i < count) {
          let chunk = '';
          while (i < count && chunk.length < 65536) chunk += event(i++);
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end(last.join(''));
      };
      pump();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}`, server })),
  );
}

/** Ask for the stream; `idleMs`: read nothing for that long first (resolves `idle` then). */
function ask(url, idleMs = 0, onIdle = () => undefined) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'a long answer' }] });
    const req = request(
      `${url}/openai/v1/chat/completions`,
      { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' } },
      async (res) => {
        if (idleMs > 0) {
          res.pause();
          await sleep(idleMs);
          onIdle();
        }
        const hash = createHash('sha256');
        let bytes = 0;
        res.on('data', (c) => {
          hash.update(c);
          bytes += c.byteLength;
        });
        res.on('end', () => resolve({ status: res.statusCode, sha256: hash.digest('hex'), bytes }));
        // The proxy cut the answer (it could not put it on the tape): how far it got.
        res.on('error', () => resolve({ status: 'cut', sha256: '', bytes }));
        res.resume();
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** `tapedeck replay` of `tape` started and stopped: seconds until it listens, its RSS then, its peak so far (MB). */
async function replayStart(cli, dir, tape) {
  const t0 = performance.now();
  const play = await start([cli, 'replay', '--tape', tape, '--dir', dir, '--port', '0']);
  const s = (performance.now() - t0) / 1000;
  const out = { s, rss: rssMb(play.pid, 'VmRSS'), peak: rssMb(play.pid, 'VmHWM') };
  await play.stop();
  return out;
}

/**
 * Replay start rows: each build (this one, and BENCH_BASELINE's) on the tape and on a tape with no exchange,
 * alternated round by round, medians.
 */
async function replayStartRows(dir) {
  const header = readFileSync(path.join(dir, 'stream.jsonl'), 'utf8').split('\n')[0];
  writeFileSync(path.join(dir, 'empty.jsonl'), header.replace('"name":"stream"', '"name":"empty"') + '\n');
  const builds = [['', CLI], ...(BASELINE ? [[' (baseline)', BASELINE]] : [])];
  const runs = new Map();
  for (let r = 0; r < ROUNDS; r++)
    for (const [label, cli] of builds)
      for (const tape of ['stream', 'empty']) {
        const key = `${tape}${label}`;
        runs.set(key, [...(runs.get(key) ?? []), await replayStart(cli, dir, tape)]);
      }
  const rows = [];
  for (const [label] of builds)
    for (const [tape, what] of [
      ['stream', `replay start, the ${MB} MB stream on the tape${label}`],
      ['empty', `replay start, a tape with no exchange${label}`],
    ]) {
      const rs = runs.get(`${tape}${label}`);
      const s = median(rs.map((x) => x.s));
      rows.push([
        `${what}: ${s.toFixed(2)} s to listen, RSS then; peak ${median(rs.map((x) => x.peak)).toFixed(0)} MB`,
        median(rs.map((x) => x.rss)),
      ]);
    }
  return rows;
}

/** Run a CLI command in its own process: seconds, peak RSS (MB), exit code, the last line of stderr. */
function timed(args) {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const lines = r.stderr.trim().split('\n');
  return { s: (performance.now() - t0) / 1000, mb: Number(lines.at(-1)) / 1024, code: r.status, said: lines.at(-2) ?? '' };
}

export async function run() {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-bench-stream-'));
  const up = await upstream();
  const sha = expectedSha();
  const rows = [];
  try {
    const rec = await start([RECORD_CLI, 'record', '--tape', 'stream', '--dir', dir, '--port', '0', '--route', `/openai=${up.url}`]);
    const idle = rssMb(rec.pid, 'VmRSS');
    const got = await ask(rec.url);
    const recordPeak = rssMb(rec.pid, 'VmHWM');
    await rec.stop();
    const tape = readFileSync(path.join(dir, 'stream.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const onTape = tape.length === 2;
    rows.push(['record, idle', idle], [`record, ${MB} MB stream to a reading client (peak)`, recordPeak]);
    if (got.status !== 200 || got.sha256 !== sha) rows.push(['  the client got', `${got.status}, ${got.bytes} bytes, not the stream`]);
    rows.push([`  on the tape`, onTape ? `yes (format ${JSON.parse(tape[0]).format})` : 'no']);

    if (onTape) rows.push(...(await replayStartRows(dir)));
    if (onTape) {
      const play = await start([CLI, 'replay', '--tape', 'stream', '--dir', dir, '--port', '0']);
      const loaded = rssMb(play.pid, 'VmRSS');
      let idleRss = NaN;
      const slow = await ask(play.url, IDLE_S * 1000, () => (idleRss = rssMb(play.pid, 'VmRSS')));
      const slowPeak = rssMb(play.pid, 'VmHWM');
      const served = await ask(play.url);
      const servedPeak = rssMb(play.pid, 'VmHWM');
      const replays = spawnSync('ls', [dir], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter((f) => f.startsWith('stream.replay-') && f.endsWith('.jsonl'));
      await play.stop();
      if (slow.sha256 !== served.sha256 || served.status !== 200) throw new Error('large-stream bench: replay was not byte for byte');
      rows.push(
        ['replay, tape loaded', loaded],
        [`replay, to a client that reads nothing for ${IDLE_S} s`, idleRss],
        ['replay, then read by it, and by a second client (peak)', Math.max(slowPeak, servedPeak)],
        ['  replayed byte for byte', served.sha256 === sha ? 'yes' : `no (${served.bytes} bytes)`],
      );
      for (const [label, args] of [
        ['show', ['show', 'stream', '--dir', dir]],
        ['diff (tape, its replay)', ['diff', 'stream', (replays[0] ?? '').replace(/\.jsonl$/, ''), '--dir', dir]],
        ['export --format har', ['export', 'stream', '--format', 'har', '--out', path.join(dir, 'stream.har'), '--dir', dir]],
      ]) {
        const r = timed([CLI, ...args]);
        rows.push([`${label}: exit ${r.code}, ${r.s.toFixed(1)} s (peak)`, r.mb]);
        if (r.code !== 0 && r.code !== 1) rows.push([`  ${label} said`, r.said.slice(0, 120)]);
      }
    }
  } finally {
    up.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nLarge event streams (${MB} MB, ${count} events; process RSS MB)\n`);
  console.log('| | RSS MB |');
  console.log('|---|---|');
  for (const [label, v] of rows) console.log(`| ${label} | ${typeof v === 'number' ? v.toFixed(0) : v} |`);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
