// Proxy overhead: throughput and latency straight to a local upstream vs through `tapedeck record` and
// `tapedeck replay`, each server in its own process, the load from this one (undici, keep-alive).
//
// Two upstreams, in one run:
// - zero-work: answers at once. Every microsecond the proxy spends shows, so this is the worst case and the
//   measure of tapedeck's CPU cost per request. A bare pass-through proxy on the same libraries runs beside it as
//   the floor: on a machine where the load generator, the upstream and the proxy share the cores, no proxy can do
//   better than that floor.
// - model-like: 20 ms before the first byte and 2 ms between stream events, a fast local model. What an agent
//   actually sees through tapedeck.
// The proxy's CPU time per request is read from /proc (Linux); elsewhere that column shows "-".
// BENCH_PROFILE=zero or BENCH_PROFILE=model runs one upstream only; BENCH_DURATION_MS sets each throughput run.
// The zero-work servers are warmed up under load, then loaded in BENCH_ROUNDS alternated rounds (default 5) and the
// medians reported: CPU per request is compared to the bare proxy's, and this machine's speed drifts between runs.
// Three answers each: non-streamed JSON and SSE chat completions (OpenAI-compatible upstream, upstream-server.mjs), and
// Bedrock's ConverseStream, AWS's binary event-stream (bedrock-upstream.mjs; tapedeck signs each recorded request
// again with SigV4, with bench credentials). BENCH_KINDS=json,sse,eventstream runs some of them only.
// BENCH_BASELINE=DIR adds `record (base)` and `replay (base)` rows from another tapedeck checkout with its dist/ built
// (e.g. `git worktree add /tmp/base <ref> && cd /tmp/base && npm ci`): before and after, measured side by side in one run.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BASELINE = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE, 'dist/cli/main.js') : undefined;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? (ROUNDS > 1 ? 2000 : 4000));
const PROMPTS = 50; // distinct requests, cycled: replay answers each from its own recording

const PROFILES = [
  { name: 'zero-work upstream', upstreamArgs: [], concurrency: 16, latencySamples: 1500, warmup: 200, floor: true, rounds: ROUNDS },
  {
    name: 'model-like upstream (20 ms to first byte, 2 ms between stream events)',
    upstreamArgs: ['20', '2'],
    concurrency: 64,
    latencySamples: 150,
    warmup: 20,
    floor: true,
    rounds: 1,
  },
];

export function start(args) {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m)
        resolve({
          url: m[1],
          pid: child.pid,
          stop: () =>
            new Promise((r) => {
              child.once('exit', r);
              child.kill('SIGTERM');
            }),
        });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

/** CPU milliseconds (user + system) a process has used so far, or undefined where /proc is not there. */
export function cpuMs(pid) {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return undefined;
  const fields = readFileSync(file, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks at USER_HZ = 100
}

/** The answers measured: `json` and `sse` from the OpenAI-compatible upstream, `eventstream` from the Bedrock one. */
const KINDS = {
  json: { label: 'non-streamed JSON chat completions', goals: { record: 1.6, replay: 1.3 } },
  sse: { label: 'streamed (SSE, ~17 events per answer) chat completions', goals: { record: 1.8, replay: 1.3 } },
  eventstream: { label: 'Bedrock ConverseStream (AWS event-stream, 17 frames per answer; record signs again with SigV4)' },
};
let KIND = 'json';
const question = (i) => `Question number ${i % PROMPTS}: what is ${i % PROMPTS} squared?`;

/**
 * The request of one call of `kind`: a chat completion (`json`, `sse`), or (`eventstream`) a ConverseStream as an AWS
 * SDK signs it. `instructions.mjs` sends the same ones.
 */
export function benchRequest(kind, pathPrefix, i) {
  if (kind === 'eventstream')
    return {
      method: 'POST',
      path: `${pathPrefix}/model/bench-model/converse-stream`,
      headers: {
        'content-type': 'application/json',
        'x-amz-date': '20261129T000000Z',
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKIDBENCHCLIENT/20261129/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000',
      },
      body: JSON.stringify({
        system: [{ text: 'You are terse.' }],
        messages: [{ role: 'user', content: [{ text: question(i) }] }],
        inferenceConfig: { maxTokens: 64 },
      }),
    };
  return {
    method: 'POST',
    path: `${pathPrefix}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body: JSON.stringify({
      model: 'bench-model',
      stream: kind === 'sse',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: question(i) },
      ],
    }),
  };
}

/** tapedeck signs recorded Bedrock requests again (SigV4) with the credentials in its environment: bench ones. */
export function useBenchAwsCredentials() {
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'AKIDBENCHTAPEDECK',
    AWS_SECRET_ACCESS_KEY: 'bench-secret',
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
  });
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
}

export async function once(pool, pathPrefix, i) {
  const t0 = performance.now();
  const res = await pool.request(benchRequest(KIND, pathPrefix, i));
  await res.body.arrayBuffer();
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  return performance.now() - t0;
}

/** Sequential requests: latency without queueing. */
async function latency(profile, url, prefix) {
  const pool = new Pool(url, { connections: 1 });
  for (let i = 0; i < profile.warmup; i++) await once(pool, prefix, i);
  const samples = [];
  for (let i = 0; i < profile.latencySamples; i++) samples.push(await once(pool, prefix, i));
  await pool.close();
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length * 0.5)], p99: samples[Math.floor(samples.length * 0.99)] };
}

/** `concurrency` workers for DURATION_MS: requests per second, and the CPU the measured process used per request. */
export async function throughput(profile, server, prefix, durationMs = DURATION_MS) {
  const pool = new Pool(server.url, { connections: profile.concurrency });
  let done = 0;
  let i = 0;
  const cpu0 = cpuMs(server.pid);
  const until = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: profile.concurrency }, async () => {
      while (performance.now() < until) {
        await once(pool, prefix, i++);
        done++;
      }
    }),
  );
  const cpu1 = cpuMs(server.pid);
  await pool.close();
  return { rps: (done / durationMs) * 1000, cpuUs: cpu0 === undefined || cpu1 === undefined ? undefined : ((cpu1 - cpu0) * 1000) / done };
}

/** The median of some numbers. */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function workload(profile, cli, dir, upstream, kind) {
  KIND = kind;
  const tape = `bench-${profile.floor ? 'zero' : 'model'}-${kind}`;
  // The servers measured, all started before any is loaded; each is loaded alone, in turn.
  const servers = [{ name: 'straight', server: upstream, prefix: '' }];
  const started = [];
  const launch = async (name, args) => {
    const server = await start(args);
    started.push(server);
    servers.push({ name, server, prefix: '/llm' });
  };
  const record = (main, name) => [
    main,
    'record',
    '--tape',
    name,
    '--dir',
    dir,
    '--port',
    '0',
    '--route',
    `/llm=${upstream.url}`,
    '--overwrite',
  ];
  const replay = (main, name, saveAs) => [main, 'replay', '--tape', name, '--dir', dir, '--port', '0', '--save-as', saveAs];
  try {
    if (profile.floor) await launch('bare proxy', [path.join(ROOT, 'bench/bare-proxy.mjs'), upstream.url, '/llm']);
    for (const [label, main] of [...(BASELINE ? [[' (base)', BASELINE]] : []), ['', cli]]) {
      const name = `${tape}${label ? '-base' : ''}`;
      // A first recording, so that replay has every prompt on its tape; then the recorder measured is a fresh one.
      const first = await start(record(main, name));
      const pool = new Pool(first.url, { connections: 1 });
      for (let i = 0; i < PROMPTS; i++) await once(pool, '/llm', i);
      await pool.close();
      await first.stop();
      await launch(`record${label}`, record(main, `${name}-rec`));
      await launch(`replay${label}`, replay(main, name, `${name}-replay`));
    }
    const rows = [];
    for (const s of servers) rows.push({ name: s.name, lat: await latency(profile, s.server.url, s.prefix), runs: [] });
    // Sequential requests leave the code warm but not in its steady state under load: one short loaded run each first.
    if (profile.rounds > 1) for (const s of servers) await throughput(profile, s.server, s.prefix, 1000);
    // Throughput and CPU in alternated rounds, each server loaded alone in turn: a machine whose speed drifts by
    // 20-40% between runs (a shared virtual machine) drifts for every server alike, and the median of the rounds holds.
    for (let round = 0; round < profile.rounds; round++)
      for (const [i, s] of servers.entries()) rows[i].runs.push(await throughput(profile, s.server, s.prefix));
    for (const r of rows) {
      r.rps = median(r.runs.map((x) => x.rps));
      r.cpuUs = r.runs.some((x) => x.cpuUs === undefined) ? undefined : median(r.runs.map((x) => x.cpuUs));
    }
    report(profile, kind, rows);
  } finally {
    for (const server of started) await server.stop();
  }
}

function report(profile, kind, rows) {
  const rounds = profile.rounds > 1 ? `, ${profile.rounds} alternated rounds (medians)` : '';
  console.log(`\n${profile.name}, ${KINDS[kind].label}`);
  console.log(
    `${profile.concurrency} connections for ${DURATION_MS} ms${rounds}; ${profile.latencySamples} sequential requests for latency`,
  );
  const row = (n) => rows.find((r) => r.name === n);
  const [straight, rec2, rep2, bare2] = [row('straight'), row('record'), row('replay'), row('bare proxy')];
  const vsBare = (r) =>
    bare2?.cpuUs === undefined || r.cpuUs === undefined || r === straight ? '-' : `${(r.cpuUs / bare2.cpuUs).toFixed(2)}x`;
  console.log('mode              req/s   vs straight   p50 ms   p99 ms   added p50 ms   proxy CPU us/req   CPU vs bare');
  for (const r of rows) {
    const cpu = r === straight || r.cpuUs === undefined ? '-' : r.cpuUs.toFixed(0);
    console.log(
      `${r.name.padEnd(15)} ${r.rps.toFixed(0).padStart(7)}   ${(r.rps / straight.rps).toFixed(2).padStart(9)}x   ` +
        `${r.lat.p50.toFixed(3).padStart(6)}   ${r.lat.p99.toFixed(3).padStart(6)}   ${(r.lat.p50 - straight.lat.p50).toFixed(3).padStart(12)}   ` +
        `${cpu.padStart(16)}   ${vsBare(r).padStart(11)}`,
    );
  }
  if (profile.rounds > 1 && rows.every((r) => r === straight || r.cpuUs !== undefined))
    console.log(
      `CPU us/req by round: ${rows
        .filter((r) => r !== straight)
        .map((r) => `${r.name} ${r.runs.map((x) => x.cpuUs.toFixed(0)).join('/')}`)
        .join('; ')}`,
    );
  const verdict = (ok) => (ok ? 'met' : 'NOT met');
  const addedOk = rec2.lat.p50 - straight.lat.p50 < 1 && rep2.lat.p50 - straight.lat.p50 < 1;
  console.log(
    `targets: record >= 0.5x straight: ${verdict(rec2.rps / straight.rps >= 0.5)}; ` +
      `replay >= 1x straight: ${verdict(rep2.rps / straight.rps >= 1)}; added p50 < 1 ms: ${verdict(addedOk)}`,
  );
  if (bare2) {
    console.log(
      `floor: the bare proxy does ${(bare2.rps / straight.rps).toFixed(2)}x straight and adds ${(bare2.lat.p50 - straight.lat.p50).toFixed(3)} ms at p50; ` +
        `record reaches ${((rec2.rps / bare2.rps) * 100).toFixed(0)}% of its throughput and adds ${(rec2.lat.p50 - bare2.lat.p50).toFixed(3)} ms to its p50`,
    );
    if (bare2.cpuUs !== undefined && rec2.cpuUs !== undefined && rep2.cpuUs !== undefined) {
      const goals = KINDS[kind].goals;
      const goal = (mode, r) => {
        const ratio = r.cpuUs / bare2.cpuUs;
        return goals === undefined
          ? `${mode} ${ratio.toFixed(2)}x (no goal set)`
          : `${mode} ${ratio.toFixed(2)}x (goal <= ${goals[mode]}x): ${verdict(ratio <= goals[mode])}`;
      };
      console.log(`CPU per request against the bare proxy: ${goal('record', rec2)}; ${goal('replay', rep2)}`);
    }
  }
}

export async function run() {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-bench-'));
  const cli = path.join(ROOT, 'dist/cli/main.js');
  console.log(
    'proxy overhead: a scripted OpenAI-compatible upstream, tapedeck and the load generator each in their own process on this machine',
  );
  const kinds = (process.env.BENCH_KINDS ?? Object.keys(KINDS).join(',')).split(',');
  useBenchAwsCredentials();
  try {
    for (const profile of PROFILES.filter((p) => !process.env.BENCH_PROFILE || p.name.startsWith(process.env.BENCH_PROFILE))) {
      for (const [server, ks] of [
        ['bench/upstream-server.mjs', ['json', 'sse']],
        ['bench/bedrock-upstream.mjs', ['eventstream']],
      ]) {
        if (!ks.some((k) => kinds.includes(k))) continue;
        const upstream = await start([path.join(ROOT, server), ...profile.upstreamArgs]);
        try {
          for (const k of ks) if (kinds.includes(k)) await workload(profile, cli, dir, upstream, k);
        } finally {
          await upstream.stop();
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
