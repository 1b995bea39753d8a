// Instructions per request, counted by valgrind's callgrind: a figure that does not drift with the machine, for
// changes whose CPU-time difference is smaller than this machine's noise (20-40% between runs). Not part of
// `npm run bench` (it takes about a minute a build and needs valgrind).
//
//   node bench/instructions.mjs [json|sse|eventstream] [record|replay] [N] [BASE_CHECKOUT]
//
// Records the bench's 50 prompts against the zero-work upstream, then runs `tapedeck record` or `tapedeck replay`
// under callgrind (node --single-threaded, so GC and compilation happen on the counted thread) twice: started and
// stopped with no request, and with N requests (default 2000, 16 at a time). The difference over N is the cost of
// one request. With BASE_CHECKOUT (a checkout with dist/ built) its build is counted the same way beside this one.
// `eventstream` is Bedrock's ConverseStream from bench/bedrock-upstream.mjs (record signs each request again with SigV4,
// with bench credentials), as in proxy.mjs.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { benchRequest, useBenchAwsCredentials } from './proxy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [kind = 'json', mode = 'replay', nText = '2000', base] = process.argv.slice(2);
const N = Number(nText);

/** One of the bench's 50 prompts (`proxy.mjs`), read to the end. */
async function ask(pool, i) {
  const res = await pool.request(benchRequest(kind, '/llm', i));
  const body = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${body.toString('utf8', 0, 300)}`);
}

function start(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.once('error', reject);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
  });
}
const stop = (child, signal) => new Promise((resolve) => (child.kill(signal), child.once('exit', resolve)));

async function count(cli, upstream, n) {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-instr-'));
  try {
    const rec = await start(process.execPath, [cli, 'record', '--tape', 't', '--dir', dir, '--port', '0', '--route', `/llm=${upstream}`]);
    const first = new Pool(rec.url, { connections: 1 });
    try {
      for (let i = 0; i < 50; i++) await ask(first, i);
    } finally {
      await first.close();
      await stop(rec.child, 'SIGTERM');
    }
    const args =
      mode === 'replay'
        ? [cli, 'replay', '--tape', 't', '--dir', dir, '--port', '0', '--save-as', 'r']
        : [cli, 'record', '--tape', 'u', '--dir', dir, '--port', '0', '--route', `/llm=${upstream}`];
    const out = path.join(dir, 'callgrind.out');
    const server = await start('valgrind', [
      '--tool=callgrind',
      `--callgrind-out-file=${out}`,
      process.execPath,
      '--single-threaded',
      ...args,
    ]);
    const pool = new Pool(server.url, { connections: 16 });
    let next = 0;
    try {
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < n) await ask(pool, next++);
        }),
      );
    } finally {
      // A failed request stops the count, never leaves the server under valgrind running.
      await pool.close();
      await stop(server.child, 'SIGINT');
    }
    return Number(/summary: (\d+)/.exec(readFileSync(out, 'utf8'))?.[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

useBenchAwsCredentials();
const upstreamServer = kind === 'eventstream' ? 'bench/bedrock-upstream.mjs' : 'bench/upstream-server.mjs';
const upstream = await start(process.execPath, [path.join(ROOT, upstreamServer)]);
try {
  for (const [label, root] of [...(base ? [['base', path.resolve(base)]] : []), ['this build', ROOT]]) {
    const cli = path.join(root, 'dist/cli/main.js');
    const [idle, loaded] = [await count(cli, upstream.url, 0), await count(cli, upstream.url, N)];
    console.log(`${mode} ${kind}, ${label}: ${((loaded - idle) / N / 1e6).toFixed(3)} M instructions per request (${N} requests)`);
  }
} finally {
  await stop(upstream.child, 'SIGTERM');
}
