// Memory for a huge answer in `tapedeck drift`: a tape recorded with small answers, then the upstream answers the same
// calls with BENCH_DRIFT_MB (default 100) MiB: one JSON answer, and one SSE stream. The peak RSS of the drift process
// (from /usr/bin/time), plain and with --refresh. BENCH_CLI runs another build (a checkout before, for "before").
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { start } from './proxy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = process.env.BENCH_CLI ?? path.join(ROOT, 'dist/cli/main.js');
const MB = Number(process.env.BENCH_DRIFT_MB ?? 100);
const PART = 'All work and no play makes Jack a dull boy. '.repeat(1489); // 64 KiB
const parts = Math.ceil((MB * 1024 * 1024) / PART.length);

/** Small answers while recording; `MB` MiB once `huge` is set: JSON for `stream: false`, SSE for `stream: true`. */
function upstream(state) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const stream = JSON.parse(body).stream === true;
      const base = { id: 'chatcmpl-bench', model: 'bench-model', created: 1 };
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        if (!state.huge)
          return res.end(
            JSON.stringify({
              ...base,
              object: 'chat.completion',
              choices: [{ index: 0, message: { role: 'assistant', content: 'small' }, finish_reason: 'stop' }],
            }),
          );
        // One JSON answer whose text is MB MiB, written as it is made.
        res.write(
          `{"id":"chatcmpl-bench","object":"chat.completion","model":"bench-model","choices":[{"index":0,"message":{"role":"assistant","content":"`,
        );
        let i = 0;
        const pump = () => {
          while (i < parts) {
            i++;
            if (!res.write(PART)) return void res.once('drain', pump);
          }
          res.end('"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}');
        };
        return pump();
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (content) =>
        `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;
      if (!state.huge) return res.end(chunk('small') + 'data: [DONE]\n\n');
      let i = 0;
      const pump = () => {
        while (i < parts) {
          // 64 KiB of text in 16 events of 4 KiB.
          let text = '';
          for (let k = 0; k < 16; k++) text += chunk(PART.slice(k * 4096, (k + 1) * 4096));
          i++;
          if (!res.write(text)) return void res.once('drain', pump);
        }
        res.end('data: [DONE]\n\n');
      };
      pump();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}`, server })),
  );
}

function ask(url, stream) {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/openai/v1/chat/completions`,
      { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' } },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'bench-model', stream, messages: [{ role: 'user', content: stream ? 'stream' : 'json' }] }));
  });
}

/** Run drift in its own process (not spawnSync: the upstream answers from this one): seconds, peak RSS (MB), exit code, last stderr line. */
function drift(args) {
  const t0 = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%M', process.execPath, CLI, 'drift', ...args], {
    env: { ...process.env, OPENAI_API_KEY: 'sk-bench-key' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      const lines = stderr.trim().split('\n');
      resolve({ s: (performance.now() - t0) / 1000, mb: Number(lines.at(-1)) / 1024, code, said: lines.at(-2) ?? '' });
    }),
  );
}

export async function run() {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-bench-drift-'));
  const state = { huge: false };
  const up = await upstream(state);
  const rows = [];
  try {
    for (const [tape, stream] of [
      ['json', false],
      ['stream', true],
    ]) {
      const rec = await start([CLI, 'record', '--tape', tape, '--dir', dir, '--port', '0', '--route', `/openai=${up.url}`]);
      await ask(rec.url, stream);
      await rec.stop();
    }
    state.huge = true;
    for (const tape of ['json', 'stream']) {
      const flags = [tape, '--dir', dir, '--json', '--route', `/openai=${up.url}`];
      for (const [label, extra] of [
        ['', []],
        [', --refresh', ['--refresh', '--save-as', `${tape}-today`, '--overwrite']],
      ]) {
        const r = await drift([...flags, ...extra]);
        rows.push([`drift, a ${MB} MB ${tape === 'json' ? 'JSON answer' : 'stream'}${label}: exit ${r.code}, ${r.s.toFixed(1)} s`, r.mb]);
        if (r.code !== 0 && r.code !== 1) rows.push([`  it said`, r.said.slice(0, 120)]);
      }
    }
  } finally {
    up.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nDrift on huge answers (${MB} MB; drift process peak RSS, MB)\n`);
  console.log('| | RSS MB |');
  console.log('|---|---|');
  for (const [label, v] of rows) console.log(`| ${label} | ${typeof v === 'number' ? v.toFixed(0) : v} |`);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
