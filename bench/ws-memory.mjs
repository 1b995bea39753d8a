// Memory of WebSocket sessions through `tapedeck record`: the proxy's own process RSS (VmHWM, the peak, from /proc)
// in a fresh proxy per scenario, upstream and client in this process.
// - large messages: the client sends two messages of BENCH_WS_MB MiB (default 50), binary, then as Realtime JSON
//   text (`input_audio_buffer.append` with the audio in base64); the upstream echoes each one back.
// - a peer that never reads: the upstream sends as fast as its socket takes while the client reads nothing, then
//   the other way round, for BENCH_WS_FLOOD_S seconds each (default 10). The proxy should pause the sending side
//   once the reading side's buffer is full, not hold everything that comes.
// BENCH_CLI=path/to/cli/main.js measures another build (a baseline) with the same script.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import { start } from './proxy.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = process.env.BENCH_CLI ? path.resolve(process.env.BENCH_CLI) : path.join(ROOT, 'dist/cli/main.js');
const MB = Number(process.env.BENCH_WS_MB ?? 50);
const FLOOD_S = Number(process.env.BENCH_WS_FLOOD_S ?? 10);
const MAX = 512 * 1024 * 1024;

function rssMb(pid, field) {
  const file = `/proc/${pid}/status`;
  if (!existsSync(file)) return NaN;
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(file, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** An upstream whose behaviour per connection is `onConnection(ws)`. */
function upstream(onConnection) {
  const server = createServer();
  const wss = new WebSocketServer({ server, maxPayload: MAX, perMessageDeflate: false });
  wss.on('connection', onConnection);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => {
          for (const c of wss.clients) c.terminate();
          server.close();
        },
      }),
    ),
  );
}

function connect(url) {
  const ws = new WebSocket(url, { maxPayload: MAX, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function withProxy(dir, tape, up, work) {
  const proxy = await start([CLI, 'record', '--tape', tape, '--dir', dir, '--port', '0', '--route', `/ws=${up.url}`]);
  const idle = rssMb(proxy.pid, 'VmRSS');
  let peak = NaN;
  try {
    await work(`${proxy.url.replace('http', 'ws')}/ws/session`, proxy.pid);
  } finally {
    peak = rssMb(proxy.pid, 'VmHWM');
    await proxy.stop();
    up.close();
  }
  return { idle, peak };
}

/** Two messages of MB MiB each, echoed by the upstream: every byte checked on the way back. */
async function largeMessages(dir, binary) {
  const up = await upstream((ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
  const messages = [0, 1].map(() => {
    const audio = randomBytes(MB * 1024 * 1024);
    if (binary) return audio;
    // base64 of MB MiB is 4/3 of it: the audio is cut so the JSON text is MB MiB.
    const b64 = audio.subarray(0, Math.floor((MB * 1024 * 1024 * 3) / 4) - 64).toString('base64');
    return JSON.stringify({ type: 'input_audio_buffer.append', event_id: 'event_1', audio: b64 });
  });
  return withProxy(dir, binary ? 'large-binary' : 'large-text', up, async (url) => {
    const ws = await connect(url);
    const back = [];
    const done = new Promise((resolve) =>
      ws.on('message', (data) => {
        back.push(data);
        if (back.length === messages.length) resolve();
      }),
    );
    for (const m of messages) ws.send(m, { binary });
    await done;
    for (const [i, m] of messages.entries())
      if (!Buffer.from(m).equals(back[i])) throw new Error(`ws-memory bench: message ${i} did not come back byte for byte`);
    ws.close();
    await new Promise((r) => ws.once('close', r));
  });
}

/** Send 64 KiB messages as fast as the socket takes them for FLOOD_S seconds while the other side reads nothing. */
async function flood(ws, seconds) {
  const chunk = randomBytes(64 * 1024);
  let sent = 0;
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until && ws.readyState === WebSocket.OPEN) {
    if (ws.bufferedAmount < 8 * 1024 * 1024) {
      ws.send(chunk, { binary: true });
      sent += chunk.byteLength;
    } else await sleep(5);
    if (sent % (16 * 1024 * 1024) === 0) await new Promise((r) => setImmediate(r));
  }
  return sent;
}

async function neverReads(dir, direction) {
  let sent = 0;
  let stopFlood = () => undefined;
  const up = await upstream((ws) => {
    if (direction === 'to-client') void flood(ws, FLOOD_S).then((n) => (sent = n));
    // A server that never reads: its socket paused from the start.
    else ws._socket.pause();
    stopFlood = () => ws.terminate();
  });
  const result = await withProxy(dir, `flood-${direction}`, up, async (url) => {
    const ws = await connect(url);
    if (direction === 'to-client') {
      ws._socket.pause();
      await sleep(FLOOD_S * 1000 + 200);
    } else sent = await flood(ws, FLOOD_S);
    ws.terminate();
    stopFlood();
  });
  return { ...result, sentMb: sent / 1024 / 1024 };
}

export async function run() {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-bench-ws-'));
  const rows = [];
  try {
    const bin = await largeMessages(dir, true);
    rows.push([`2 × ${MB} MiB binary messages, echoed`, bin]);
    const text = await largeMessages(dir, false);
    rows.push([`2 × ${MB} MiB JSON text messages (base64 audio), echoed`, text]);
    const toClient = await neverReads(dir, 'to-client');
    rows.push([`upstream sends ${FLOOD_S} s, client never reads (upstream sent ${toClient.sentMb.toFixed(0)} MiB)`, toClient]);
    const toServer = await neverReads(dir, 'to-server');
    rows.push([`client sends ${FLOOD_S} s, upstream never reads (client sent ${toServer.sentMb.toFixed(0)} MiB)`, toServer]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nWebSocket session memory (tapedeck record, proxy process RSS in MB)\n`);
  console.log('| scenario | idle | peak | peak - idle |');
  console.log('|---|---|---|---|');
  for (const [label, r] of rows)
    console.log(`| ${label} | ${r.idle.toFixed(0)} | ${r.peak.toFixed(0)} | ${(r.peak - r.idle).toFixed(0)} |`);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
