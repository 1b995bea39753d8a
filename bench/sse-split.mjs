// SSE splitting cost: one 20 MB event fed in 64 KiB chunks through SseSplitter and toSseEvent (what the recorder does), against the floor of touching every
// chunk once (decoding it, scanning it for a blank line, keeping it) and joining the event once. Run: npm run build && node bench/sse-split.mjs
import { SseSplitter, toSseEvent } from '../dist/tape/framing/sse.js';

const MB = Number(process.env.SSE_EVENT_MB ?? 20);
const CHUNK = 64 * 1024;
const event = Buffer.from(`data: ${'x'.repeat(MB * 1024 * 1024)}\n\n`, 'utf8');
const chunks = [];
for (let i = 0; i < event.byteLength; i += CHUNK) chunks.push(event.subarray(i, i + CHUNK));

/** The least any reader of the event does: decode each chunk, look for the blank line, keep the text, join it once. */
function direct() {
  const decoder = new TextDecoder();
  const parts = [];
  let found = 0;
  for (const c of chunks) {
    const text = decoder.decode(c, { stream: true });
    if (text.includes('\n\n')) found++;
    parts.push(text);
  }
  return parts.join('').length + found;
}

function split() {
  const decoder = new TextDecoder();
  const s = new SseSplitter();
  let n = 0;
  for (const c of chunks)
    for (const block of s.push(decoder.decode(c, { stream: true }))) n += toSseEvent(block, 0).raw === undefined ? 1 : 100;
  return n;
}

function time(fn, runs) {
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

export async function run() {
  const runs = Number(process.env.SSE_RUNS ?? 5);
  const d = time(direct, runs);
  const s = time(split, runs);
  if (split() !== 1) throw new Error('the event was not split as one block');
  console.log(`\nSSE splitting: one ${MB} MB event in ${chunks.length} chunks of 64 KiB (median of ${runs})`);
  console.log(`  direct (decode, scan, keep, join)  ${d.toFixed(1)} ms`);
  console.log(`  SseSplitter                        ${s.toFixed(1)} ms  (${(s / d).toFixed(2)}x)`);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
