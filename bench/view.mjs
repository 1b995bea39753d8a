/* global document */ // (in page.waitForFunction callbacks, which run in the browser)
// The viewer on a large tape: a 10,000-exchange tape (half LLM calls, half of them streamed with 20 events,
// half MCP tool calls; about 25 MB) opened in `tapedeck view`. Measures the API (cold: the first request reads the
// tape; warm: it is kept) and, where Debian's Chromium is installed, the page in a real browser: from navigation
// to the first rows drawn (the "opens in under 2 s" budget), jumping to the last step, opening a step in full.
// BENCH_VIEW_SIZE sets the number of exchanges.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const SIZE = Number(process.env.BENCH_VIEW_SIZE ?? 10_000);
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const BUDGET_MS = 2000;

const SYSTEM = 'You are the support assistant of Acme. Answer in two sentences, cite the ticket, never invent order data.';

function llm(i, t) {
  const streamed = i % 4 === 0;
  const history = [];
  for (let k = Math.max(0, i - 6); k < i; k += 2)
    history.push(
      { role: 'user', content: `Earlier question ${k} about order ${k * 7}` },
      { role: 'assistant', content: `Earlier answer ${k}: the order ${k * 7} shipped on time.` },
    );
  const answer = `Ticket ${i}: the refund for order ${i * 7} was issued; it reaches the card in 3 to 5 days.`;
  const chunk = (k) =>
    JSON.stringify({
      id: `chatcmpl-${i}`,
      object: 'chat.completion.chunk',
      model: 'gpt-4o-mini-2024-07-18',
      choices: [{ index: 0, delta: { content: `${answer.slice(k * 5, k * 5 + 5)}` }, finish_reason: null }],
    });
  return {
    startedAt: new Date(Date.parse('2026-11-01T09:00:00Z') + t).toISOString(),
    offsetMs: t,
    transport: 'http',
    route: '/openai',
    upstream: 'https://api.openai.com',
    request: {
      method: 'POST',
      path: '/v1/chat/completions',
      query: [],
      headers: { authorization: 'Bearer sk-bench', 'content-type': 'application/json' },
      body: {
        kind: 'json',
        json: {
          model: 'gpt-4o-mini',
          temperature: 0,
          stream: streamed,
          messages: [
            { role: 'system', content: SYSTEM },
            ...history,
            { role: 'user', content: `What happened to the refund of order ${i * 7}?` },
          ],
        },
      },
    },
    response: streamed
      ? {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          events: [...Array.from({ length: 19 }, (_, k) => ({ offsetMs: 40 + k * 3, data: chunk(k) })), { offsetMs: 100, data: '[DONE]' }],
        }
      : {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: {
            kind: 'json',
            json: {
              id: `chatcmpl-${i}`,
              model: 'gpt-4o-mini-2024-07-18',
              choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
            },
          },
        },
    timing: { ttfbMs: 40, durationMs: streamed ? 101 : 60 },
    llm: {
      provider: 'openai',
      api: 'chat.completions',
      model: 'gpt-4o-mini',
      params: { temperature: 0 },
      streamed,
      usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 },
      toolCalls: [],
      outputText: answer,
      stopReason: 'stop',
    },
  };
}

function tool(i, t) {
  const result = { content: [{ type: 'text', text: `Order ${i * 7}: refunded, 42.00 EUR, card ending 4242` }] };
  return {
    startedAt: new Date(Date.parse('2026-11-01T09:00:00Z') + t).toISOString(),
    offsetMs: t,
    transport: 'http',
    route: '/mcp',
    upstream: 'http://127.0.0.1:3001/mcp',
    request: {
      method: 'POST',
      path: '/',
      query: [],
      headers: { 'content-type': 'application/json', 'mcp-session-id': 'bench' },
      body: {
        kind: 'json',
        json: { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'get_order', arguments: { id: i * 7 } } },
      },
    },
    response: {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: { kind: 'json', json: { jsonrpc: '2.0', id: i, result } },
    },
    timing: { ttfbMs: 5, durationMs: 6 },
    mcp: {
      direction: 'client-to-server',
      method: 'tools/call',
      jsonrpcId: i,
      toolName: 'get_order',
      arguments: { id: i * 7 },
      result,
      isError: i % 97 === 0,
      notifications: [],
      sessionId: 'bench',
      transport: 'streamable-http',
    },
  };
}

async function writeBigTape(dir) {
  const { createTapeWriter } = await import('../dist/tape/tape-writer.js');
  const writer = await createTapeWriter({
    dir,
    name: 'big',
    ifExists: 'overwrite',
    header: { mode: 'record', routes: [{ prefix: '/openai', upstream: 'https://api.openai.com' }] },
  });
  let t = 0;
  for (let i = 0; i < SIZE; i++) {
    void writer.append(i % 2 === 0 ? llm(i, t) : tool(i, t));
    t += i % 2 === 0 ? 65 : 8;
    if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
  }
  await writer.close();
  return writer.path;
}

async function startViewer(dir) {
  const { startViewer: start } = await import('../dist/view/viewer.js');
  const { costFnFor } = await import('../dist/view/model.js');
  const { createLogger } = await import('../dist/log.js');
  return start({ dir, port: 0, costOf: costFnFor(undefined), log: createLogger('silent') });
}

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function api(viewer) {
  const get = async (p) => {
    const res = await fetch(`${viewer.url}api/${p}`);
    const body = await res.text();
    return body.length;
  };
  const name = 'big';
  const coldMeta = await timed(() => get(`tape?name=${name}`));
  const rows = await timed(() => get(`rows?name=${name}&from=0&count=200`));
  const overview = await timed(() => get(`overview?name=${name}`));
  const step = await timed(() => get(`step?name=${name}&i=${SIZE - 1}`));
  const warm = await timed(() => get(`tape?name=${name}`));
  return { coldMeta, rows, overview, step, warm };
}

async function browser(dir) {
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    return { skipped: 'playwright-core is not installed' };
  }
  if (!existsSync(CHROMIUM)) return { skipped: `no ${CHROMIUM} (apt-get install chromium)` };
  const profile = mkdtempSync(path.join(tmpdir(), 'tapedeck-bench-chromium-'));
  const viewer = await startViewer(dir); // a fresh server: the first open reads the tape
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
  });
  try {
    const measureOpen = async () => {
      const page = await ctx.newPage();
      const t0 = performance.now();
      await page.goto(`${viewer.url}#/tape?name=big`);
      await page.waitForFunction(() => document.querySelectorAll('.row:not(.placeholder)').length >= 10);
      const ms = performance.now() - t0;
      const rowsInDom = await page.locator('.row').count();
      return { page, ms, rowsInDom };
    };
    const cold = await measureOpen();
    const jump = await timed(async () => {
      await cold.page.keyboard.press('End');
      await cold.page.waitForSelector(`.row[data-i="${SIZE - 1}"]:not(.placeholder)`);
      await cold.page.waitForFunction((n) => document.querySelector('#detail h2')?.textContent?.startsWith(`Step ${n}`), SIZE - 1);
    });
    const back = await timed(async () => {
      await cold.page.keyboard.press('Home');
      await cold.page.waitForFunction(() => document.querySelector('#detail h2')?.textContent?.startsWith('Step 0'));
    });
    const heapMb = (await cold.page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0)) / 1e6;
    await cold.page.close();
    const warm = await measureOpen();
    await warm.page.close();
    return { cold: cold.ms, rowsInDom: cold.rowsInDom, warm: warm.ms, jump: jump.ms, back: back.ms, heapMb };
  } finally {
    await ctx.close();
    await viewer.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

export async function run() {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-bench-view-'));
  try {
    const t0 = performance.now();
    const file = await writeBigTape(dir);
    const mb = statSync(file).size / 1e6;
    console.log(
      `\n## viewer: a ${SIZE.toLocaleString('en-US')}-exchange tape (${mb.toFixed(0)} MB, written in ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`,
    );
    const viewer = await startViewer(dir);
    let a;
    try {
      a = await api(viewer);
    } finally {
      await viewer.close();
    }
    const kb = (n) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(0)} KB`);
    console.log('| API request | time | answer |');
    console.log('|---|---|---|');
    console.log(`| first /api/tape (reads the tape, builds the timeline) | ${a.coldMeta.ms.toFixed(0)} ms | ${kb(a.coldMeta.value)} |`);
    console.log(`| /api/rows, first page of 200 | ${a.rows.ms.toFixed(1)} ms | ${kb(a.rows.value)} |`);
    console.log(`| /api/overview (all ${SIZE} steps, columns) | ${a.overview.ms.toFixed(1)} ms | ${kb(a.overview.value)} |`);
    console.log(`| /api/step, the last step in full | ${a.step.ms.toFixed(1)} ms | ${kb(a.step.value)} |`);
    console.log(`| /api/tape again (kept) | ${a.warm.ms.toFixed(1)} ms | ${kb(a.warm.value)} |`);
    const b = await browser(dir);
    if (b.skipped) console.log(`\nbrowser: skipped (${b.skipped})`);
    else {
      console.log('\n| in Chromium | time |');
      console.log('|---|---|');
      console.log(`| open the tape, cold server (navigation to first rows drawn) | ${b.cold.toFixed(0)} ms |`);
      console.log(`| open the tape again (server has it) | ${b.warm.toFixed(0)} ms |`);
      console.log(`| End: jump to step ${SIZE - 1} and open it | ${b.jump.toFixed(0)} ms |`);
      console.log(`| Home: back to step 0 and open it | ${b.back.toFixed(0)} ms |`);
      console.log(`\nrows in the DOM: ${b.rowsInDom} of ${SIZE} (virtualised); page JS heap ${b.heapMb.toFixed(1)} MB`);
      console.log(`budget: open under ${BUDGET_MS} ms: ${b.cold < BUDGET_MS ? 'met' : 'MISSED'} (${b.cold.toFixed(0)} ms)`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
