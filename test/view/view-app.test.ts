/**
 * The viewer's HTTP app in-process (`app.request`): the loopback guard, paging, a step in full, debrief, compare,
 * the browser app's files; then the real server for live updates over SSE.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffTapes } from '../../src/inspect/diff/diff.js';
import { createLogger } from '../../src/log.js';
import { loadTape } from '../../src/tape/tape-reader.js';
import { createTapeWriter } from '../../src/tape/stores/tape-writer.js';
import { costFnFor, usageCostFnFor } from '../../src/view/model.js';
import { createOpenTapes } from '../../src/view/open-tapes.js';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { createViewApp, type ViewApp } from '../../src/view/view-app.js';
import { startViewer } from '../../src/view/viewer.js';
import { GOAL, recordAgentTapes } from '../inspect/record-agent.js';
import { llmCall, toolCall, writeTape } from './synthetic-tape.js';

const PORT = 4321;
const HOST = `127.0.0.1:${PORT}`;
let dir: string;
let view: ViewApp;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, read field by field in the assertions
async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await view.app.request(url, { headers: { host: HOST, ...headers } });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // html, js
  }
  return { status: res.status, body, headers: res.headers };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-view-'));
  await recordAgentTapes(dir);
  const big = [];
  for (let i = 0; i < 1200; i++)
    big.push(i % 3 === 2 ? toolCall(i * 10, { isError: i % 9 === 8 }) : llmCall(i * 10, { events: i % 2 ? 60 : undefined }));
  await writeTape(dir, 'big', big);
  // A tape that sat idle for a minute before the agent's first request, then ran for 300 ms.
  await writeTape(dir, 'idle-start', [llmCall(60_000), toolCall(60_100), llmCall(60_200)]);
  const costOf = costFnFor(undefined);
  view = createViewApp({
    tapes: createOpenTapes({ store: createDirStore(dir), usageCost: usageCostFnFor(undefined) }),
    costOf,
    log: createLogger('silent'),
    port: () => PORT,
    boundAddress: '127.0.0.1',
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loopback guard', () => {
  it('refuses a Host that is not this viewer (DNS rebinding) with a 403 that says why', async () => {
    for (const host of ['evil.example', `evil.example:${PORT}`, `127.0.0.1:${PORT + 1}`, '']) {
      const r = await get('/api/tapes', { host });
      expect(r.status, host).toBe(403);
      expect(r.body.error.code).toBe('FORBIDDEN');
      expect(r.body.error.message).toMatch(/is not this viewer .*DNS rebinding/);
    }
    expect((await get('/', { host: 'attacker.test' })).status).toBe(403);
  });

  it('accepts the loopback names with its port', async () => {
    for (const host of [`127.0.0.1:${PORT}`, `localhost:${PORT}`, `[::1]:${PORT}`])
      expect((await get('/api/tapes', { host })).status, host).toBe(200);
  });

  it('refuses another Origin and cross-site fetches, accepts its own origin', async () => {
    const other = await get('/api/tapes', { origin: 'http://evil.example' });
    expect(other.status).toBe(403);
    expect(other.body.error.message).toContain('Origin "http://evil.example" is not this viewer');
    expect((await get('/api/tapes', { origin: 'null' })).status).toBe(403);
    expect((await get('/api/tapes', { origin: `http://localhost:${PORT}` })).status).toBe(403); // not the Host it asked
    const cross = await get('/api/tapes', { 'sec-fetch-site': 'cross-site' });
    expect(cross.status).toBe(403);
    expect(cross.body.error.message).toContain('Sec-Fetch-Site "cross-site"');
    expect((await get('/api/tapes', { origin: `http://${HOST}`, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
  });

  it('serves the app with a strict content security policy', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.body).toContain('<main id="main">');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const js = await get('/assets/app.js');
    expect(js.headers.get('content-type')).toContain('text/javascript');
    expect((await get('/assets/nope.js')).status).toBe(404);
  });
});

describe('API', () => {
  it('lists the tapes like tapedeck list, with replays pointing at their original', async () => {
    const r = await get('/api/tapes');
    const names = r.body.tapes.map((t: { name: string }) => t.name);
    expect(names).toEqual(['agent', 'agent-replay', 'big', 'idle-start']);
    const replay = r.body.tapes.find((t: { name: string }) => t.name === 'agent-replay');
    expect(replay).toMatchObject({ ok: true, mode: 'replay', replayOf: { tape: 'agent' }, matches: { exact: 1, miss: 1 } });
  });

  it('pages the timeline: rows without bodies, in order, with lanes, timings and stream ticks', async () => {
    const meta = await get('/api/tape?name=big');
    expect(meta.body).toMatchObject({ name: 'big', total: 1200, lanes: { llm: 800, tool: 400 } });
    const page = await get('/api/rows?name=big&from=300&count=50');
    expect(page.status).toBe(200);
    expect(page.body.items).toHaveLength(50);
    expect(page.body.items.map((it: { i: number }) => it.i)).toEqual(Array.from({ length: 50 }, (_, k) => 300 + k));
    const row = page.body.items[1];
    expect(row).toMatchObject({ i: 301, kind: 'LLM', lane: 'llm', start: 3010, ttfb: 4, events: 61 });
    expect(row.ticks.length).toBeLessThanOrEqual(48);
    expect(row).not.toHaveProperty('exchange');
    expect(JSON.stringify(page.body)).not.toContain('"messages"'); // no bodies on the list
    const failing = page.body.items.find((it: { kind: string; error: string | null }) => it.kind === 'MCP' && it.error !== null);
    expect(failing.error).toBe('tool error');
    const end = await get('/api/rows?name=big&from=1190&count=100');
    expect(end.body.items).toHaveLength(10);
    const overview = await get('/api/overview?name=big');
    expect(overview.body.lane).toHaveLength(1200);
    expect(overview.body.mark).toContain('e');
  });

  it("starts the time axis at the first exchange, not at the tape's creation: idle time before it squeezes no bar", async () => {
    const meta = await get('/api/tape?name=idle-start');
    const rows = await get('/api/rows?name=idle-start&from=0&count=10');
    const overview = await get('/api/overview?name=idle-start');
    const last = rows.body.items[2];
    expect(rows.body.items.map((it: { start: number }) => it.start)).toEqual([0, 100, 200]);
    expect(meta.body.spanMs).toBe(200 + last.dur);
    expect(overview.body).toMatchObject({ spanMs: 200 + last.dur, start: [0, 100, 200] });
  });

  it('answers bad paging and unknown tapes with a clear error', async () => {
    const tooMany = await get('/api/rows?name=big&count=5000');
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/count/);
    const missing = await get('/api/tape?name=nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain('no tape "nope"');
    expect((await get('/api/tape?name=../etc/passwd')).status).toBe(400);
    // A name longer than a file name may be: 400 saying so, no file-system error, no path.
    for (const name of ['a'.repeat(300), `sub/${'b'.repeat(260)}`, 'c'.repeat(250)]) {
      for (const url of [`/api/tape?name=${name}`, `/api/rows?name=${name}`, `/api/step?name=${name}&i=0`]) {
        const long = await get(url);
        expect(long.status, url).toBe(400);
        expect(long.body.error.code).toBe('BAD_ARGS');
        expect(long.body.error.message).toMatch(/tape name is too long/);
        expect(long.body.error.message).not.toContain(dir);
        expect(long.body.error.message).not.toContain(tmpdir());
      }
    }
    const noStep = await get('/api/step?name=agent&i=99');
    expect(noStep.status).toBe(404);
    expect(noStep.body.error.message).toContain('no step 99');
  });

  it('opens a step in full: the conversation as the model saw it, tools so far, the exchange with secrets redacted', async () => {
    const d = await get('/api/step?name=agent&i=1');
    expect(d.status).toBe(200);
    expect(d.body.item.i).toBe(1);
    expect(d.body.conversationFrom).toBe(1);
    expect(d.body.conversation[0]).toEqual({ role: 'user', text: GOAL });
    expect(d.body.conversation.some((m: { role: string }) => m.role === 'tool')).toBe(true);
    expect(d.body.exchange.request.headers.authorization).toBe('[REDACTED]');
    const byId = await get(`/api/step?name=agent&id=${d.body.item.id}`);
    expect(byId.body.item.i).toBe(1);
    // The huge request body (a side file on the tape) is clipped in the panel, whole in the raw exchange.
    const huge = await get('/api/step?name=agent&i=3');
    expect(huge.body.clipped).toBe(true);
    const raw = await get(`/api/raw?name=agent&id=${huge.body.item.id}`);
    expect(JSON.stringify(raw.body).length).toBeGreaterThan(70_000);
  });

  it('explains how a replay answer was found, with the recorded step it came from', async () => {
    const d = await get('/api/step?name=agent-replay&i=0');
    expect(d.body.match).toMatchObject({ kind: 'exact', tape: 'agent', served: { i: 0, target: 'gpt-4o-mini' } });
    const miss = await get('/api/step?name=agent-replay&i=1');
    expect(miss.body.match.kind).toBe('miss');
    expect(miss.body.item.error).toMatch(/^miss/);
  });

  it('gives the debrief', async () => {
    const d = await get('/api/debrief?name=agent');
    expect(d.body.goal).toBe(GOAL);
    expect(d.body.decisions.map((x: { tool: string }) => x.tool)).toEqual(['get_weather', 'lookup_city', 'get_time']);
  });

  it('compares two tapes: the diff of tapedeck diff, tool rows with edit marks, step rows with the first divergence', async () => {
    const c = await get('/api/compare?a=agent&b=agent-replay');
    expect(c.status).toBe(200);
    const expected = diffTapes(await loadTape(dir, 'agent'), await loadTape(dir, 'agent-replay'));
    expect(c.body.diff).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(c.body.tools.map((r: { a: { mark: string | null } | null }) => r.a?.mark ?? null)).toEqual([null, '-', '-']);
    const divergent = c.body.steps.filter((s: { divergent: boolean }) => s.divergent);
    expect(divergent).toHaveLength(1);
    // The divergent row holds the steps the diff names, by their numbers on each tape's timeline.
    expect([divergent[0].a?.i ?? null, divergent[0].b?.i ?? null]).toEqual([
      expected.firstDivergence?.step,
      expected.firstDivergence?.replayStep,
    ]);
    expect(c.body.steps[0].delta.tokens).toBe(0);
    expect((await get('/api/compare?a=agent')).status).toBe(400);
  });
});

describe('live', () => {
  it('tells an open page when the tape it shows grows', async () => {
    const name = 'growing';
    await writeTape(dir, name, [llmCall(0)]);
    const viewer = await startViewer({ dir, port: 0, log: createLogger('silent'), pollMs: 30 });
    const abort = new AbortController();
    try {
      const res = await fetch(`${viewer.url}api/live?name=${name}`, { signal: abort.signal });
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      const updates: { total: number }[] = [];
      const read = (async () => {
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buf += Buffer.from(value).toString();
          for (const m of buf.matchAll(/data: (.*)\n\n/g)) updates.push(JSON.parse(m[1]!));
          buf = buf.slice(buf.lastIndexOf('\n\n') + 2);
          if (updates.some((u) => u.total === 3)) return;
        }
      })();
      await new Promise((r) => setTimeout(r, 100));
      const writer = await createTapeWriter({ dir, name, ifExists: 'append', header: { mode: 'record', routes: [] } });
      await writer.append(llmCall(20));
      await writer.append(toolCall(30));
      await writer.close();
      await Promise.race([read, new Promise((_, rej) => setTimeout(() => rej(new Error(`no update: ${JSON.stringify(updates)}`)), 5000))]);
      expect(updates[0]!.total).toBe(1);
      expect(updates.at(-1)!.total).toBe(3);
      const rows = await fetch(`${viewer.url}api/rows?name=${name}`).then((r) => r.json() as Promise<{ total: number }>);
      expect(rows.total).toBe(3);
    } finally {
      abort.abort();
      await viewer.close();
    }
  });
});
