/**
 * The viewer in a real browser: Debian's Chromium driven by playwright-core, against `tapedeck view` started
 * through the CLI, on tapes recorded through the proxy by a real agent (OpenAI SDK + MCP SDK against
 * server-everything) and its modified replay (`--llm live --model gpt-4.1`). Screenshots go to test/artifacts/.
 * Skipped, with a note, where /usr/bin/chromium is absent (`.ci/run` installs it from Debian's packages).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffTapes } from '../../src/inspect/diff/diff.js';
import { loadTape } from '../../src/tape/tape-reader.js';
import { toSteps } from '../../src/inspect/steps.js';
import { runCli, spawnCli, waitForListening } from '../helpers/cli.js';
import { openaiChat, startScriptedUpstream } from '../helpers/scripted-upstream.js';
import { ASK, SYSTEM, recordRunAndModifiedReplay } from './record-run.js';

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
const ARTIFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../artifacts');
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(`test/view/browser.test.ts: SKIPPED: no ${CHROMIUM} (install Debian's chromium: apt-get install -y chromium)`);

let dir: string;
let profile: string;
let viewer: { url: string; stop: () => Promise<number | null> };
let browser: BrowserContext;

async function startView(): Promise<typeof viewer> {
  const child = spawnCli(['view', '--dir', dir, '--no-open', '--port', '0']);
  const url = (await waitForListening(child)).replace(/#.*$/, '');
  return { url, stop: () => new Promise((resolve) => (child.once('exit', (code) => resolve(code)), child.kill('SIGTERM'))) };
}

async function open(hash: string, ready: string): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
  await page.goto(`${viewer.url}${hash}`);
  await page.waitForSelector(`body[data-ready="${ready}"]`);
  return page;
}

const shot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: path.join(ARTIFACTS, name) });

describe.skipIf(!hasChromium)('the viewer in Chromium', () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-browser-'));
    profile = mkdtempSync(path.join(tmpdir(), 'tapedeck-chromium-'));
    mkdirSync(ARTIFACTS, { recursive: true });
    await recordRunAndModifiedReplay(dir);
    viewer = await startView();
    // A fresh, empty profile per run; playwright adds its own --remote-debugging-pipe.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1280, height: 760 },
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    const code = await viewer?.stop();
    expect(code).toBe(0); // SIGTERM stops the viewer cleanly
    rmSync(dir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  });

  it('lists the tapes, replays under their original, and filters them by name', async () => {
    const page = await open('#/', 'tapes');
    await expect.poll(() => page.locator('tr[data-name]').count()).toBe(2);
    expect(await page.locator('tr.replay[data-name="run-live"]').count()).toBe(1);
    await page.fill('#search', 'live');
    await expect
      .poll(() => page.locator('tr[data-name]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name'))))
      .toEqual(['run', 'run-live']);
    await page.fill('#search', 'nothing-like-this');
    await expect.poll(() => page.locator('tr[data-name]').count()).toBe(0);
    await page.close();
  });

  it('opens a recorded agent tape and steps through it with the keyboard', async () => {
    const tape = await loadTape(dir, 'run');
    const page = await open('#/tape?name=run', 'tape');
    await expect.poll(() => page.locator('.row:not(.placeholder)').count()).toBe(tape.exchanges.length);
    expect(await page.locator('.row.lane-llm').count()).toBe(tape.exchanges.filter((e) => e.llm).length);
    const heading = page.locator('#detail h2');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => heading.textContent()).toMatch(/^Step 0\b/);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => heading.textContent()).toMatch(/^Step 2\b/);
    expect(await page.locator('.row.selected').getAttribute('data-i')).toBe('2');
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => heading.textContent()).toMatch(/^Step 1\b/);
    expect(await page.locator('.row.selected').getAttribute('data-i')).toBe('1');
    expect(new URL(page.url()).hash).toMatch(/[?&]step=1$/); // the step number tapedeck show prints: a reload comes back to it
    await shot(page, 'viewer-timeline.png');
    await page.close();
  });

  it("a URL's step= is the step number tapedeck show prints; a link by exchange id (made before) still opens its step", async () => {
    const steps = toSteps((await loadTape(dir, 'run')).exchanges);
    const last = steps.length - 1;
    const page = await open(`#/tape?name=run&step=${last}`, 'tape');
    const heading = page.locator('#detail h2');
    await expect.poll(() => heading.textContent()).toMatch(new RegExp(`^Step ${last}\\b`));
    expect(await page.locator('.row.selected').getAttribute('data-i')).toBe(String(last));
    // The same step as show numbers it on the command line.
    const show = await runCli(['show', 'run', '--dir', dir, '--step', String(last), '--json']);
    expect(await heading.textContent()).toContain((JSON.parse(show.stdout) as { step: { target: string } }).step.target);
    const hash = `#/tape?name=run&step=${steps[1]!.exchange.id}`;
    await page.evaluate((h) => ((globalThis as unknown as { location: { hash: string } }).location.hash = h), hash);
    await expect.poll(() => heading.textContent()).toMatch(/^Step 1\b/);
    await expect.poll(() => new URL(page.url()).hash).toMatch(/[?&]step=1$/);
    await page.close();
  });

  it("opens a step's conversation as the model saw it, and its raw request with the key redacted", async () => {
    const tape = await loadTape(dir, 'run');
    const ordered = [...tape.exchanges].sort((a, b) => a.offsetMs - b.offsetMs || a.seq - b.seq);
    const last = ordered.findLastIndex((e) => e.llm !== undefined); // the streamed answer after the tool result
    const page = await open('#/tape?name=run', 'tape');
    await page.click(`.row[data-i="${last}"]`);
    await expect.poll(() => page.locator('#detail h2').textContent()).toMatch(new RegExp(`^Step ${last}\\b`));
    const conversation = page.locator('#conversation');
    await expect.poll(() => conversation.textContent()).toContain(ASK);
    const text = (await conversation.textContent()) ?? '';
    expect(text).toContain(SYSTEM);
    expect(text).toContain('→ echo'); // the tool call the model made
    expect(text).toContain('Echo: hello'); // the tool result it was given
    expect(text).toContain('Mini says: Echo: hello'); // and its (streamed) answer
    await shot(page, 'viewer-conversation.png');
    await page.click('[data-tab="request"]');
    await expect.poll(() => page.locator('table.headers').first().textContent()).toContain('authorization[REDACTED]');
    await page.click('[data-tab="response"]');
    await expect.poll(() => page.locator('#tab-body').textContent()).toMatch(/Stream: \d+ events/);
    await page.close();
  });

  it('compares the run with its modified replay and highlights the first divergence', async () => {
    const expected = diffTapes(await loadTape(dir, 'run'), await loadTape(dir, 'run-live'));
    expect(expected.firstDivergence).not.toBeNull();
    const page = await open('#/tape?name=run-live', 'tape');
    await page.click('#compare-original');
    await page.waitForSelector('body[data-ready="compare"]');
    const divergent = page.locator('tr.divergent');
    expect(await divergent.count()).toBe(1);
    // The step numbers are tapedeck show's, on each tape (the row's cells and the banner say the same).
    const fd = expected.firstDivergence!;
    expect(await divergent.getAttribute('data-step')).toBe(String(fd.step));
    expect(await divergent.getAttribute('data-replay-step')).toBe(String(fd.replayStep));
    expect(await divergent.locator('.step-no').allTextContents()).toEqual([String(fd.step), String(fd.replayStep)]);
    expect(await page.locator('#first-divergence').textContent()).toBe(
      `First divergence at ${fd.step === fd.replayStep ? `step ${fd.step}` : `step ${fd.step} in run, step ${fd.replayStep} in run-live`}: ${fd.reason}`,
    );
    expect(await page.locator('tr.divergent-reason').textContent()).toContain(fd.reason);
    expect(await page.locator('#score').textContent()).toBe(`score ${expected.score.toFixed(2)}`);
    // What the CLI's diff has too: ARS, each LLM call's output similarity, the blocked call.
    expect(await page.locator('#ars').textContent()).toBe(`ARS ${expected.ars.score.toFixed(2)} (${expected.ars.band})`);
    expect(await page.locator('#ars-detail').textContent()).toContain(`0.3 × tool accuracy ${expected.ars.toolAccuracy.toFixed(2)}`);
    const calls = page.locator('#call-table tr');
    expect(await calls.count()).toBe(expected.steps.length + 1);
    expect(await calls.nth(1).locator('td').nth(1).textContent()).toBe(String(expected.steps[0]!.step));
    expect(await calls.nth(1).locator('td').nth(4).textContent()).toBe(expected.steps[0]!.outputSimilarity!.toFixed(2));
    const blocked = page.locator('#step-table td.blocked');
    expect(await blocked.count()).toBe(1);
    expect(await blocked.textContent()).toContain('⊘');
    expect(await blocked.getAttribute('title')).toMatch(/^"echo" /);
    expect(await page.locator('#tool-table td.blocked').count()).toBe(1);
    // The edit script: the original's echo("hello") removed, the replay's echo("hello from the other model") added.
    expect(await page.locator('#tool-table td.mark-removed').textContent()).toContain('"hello"');
    expect(await page.locator('#tool-table td.mark-added').textContent()).toContain('hello from the other model');
    expect(await divergent.isVisible()).toBe(true);
    const box = await divergent.boundingBox();
    expect(box !== null && box.y >= 0 && box.y < 760).toBe(true); // scrolled into view
    await shot(page, 'viewer-compare.png');
    await page.close();
  });

  it('exports a HAR that a real HAR consumer replays: Playwright serves the recorded answers to the page from it', async () => {
    const harFile = path.join(dir, 'run.har');
    const r = await runCli(['export', 'run', '--format', 'har', '--out', harFile, '--dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    const tape = await loadTape(dir, 'run');
    const llm = tape.exchanges.find((e) => e.llm && !e.llm.streamed)!;
    const origin = new URL(llm.upstream!).origin; // the scripted upstream: stopped long ago, so only the HAR can answer
    const harProfile = mkdtempSync(path.join(tmpdir(), 'tapedeck-chromium-har-'));
    const ctx = await chromium.launchPersistentContext(harProfile, { executablePath: CHROMIUM, headless: true, args: FLAGS });
    try {
      await ctx.routeFromHAR(harFile, { url: `${origin}/v1/**`, notFound: 'abort' });
      await ctx.route(`${origin}/`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>har</title>' }));
      const page = await ctx.newPage();
      await page.goto(`${origin}/`);
      const answer = await page.evaluate(
        async ([body]) => {
          const res = await fetch('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          return { status: res.status, text: await res.text() };
        },
        [JSON.stringify((llm.request.body as { json: unknown }).json)],
      );
      expect(answer.status).toBe(llm.response!.status);
      expect(JSON.parse(answer.text)).toEqual((llm.response!.body as { json: unknown }).json);
    } finally {
      await ctx.close();
      rmSync(harProfile, { recursive: true, force: true });
    }
  });

  it('shows the debrief', async () => {
    const page = await open('#/debrief?name=run', 'debrief');
    expect(await page.locator('#goal').textContent()).toContain(ASK);
    expect(await page.locator('#path').textContent()).toContain('echo');
    await page.close();
  });

  it('follows a tape while it is being recorded', async () => {
    const llm = await startScriptedUpstream(() => openaiChat({ content: 'ok' }));
    const rec = spawnCli(['record', '--tape', 'live', '--dir', dir, '--port', '0', '--route', `/openai=${llm.url}`]);
    try {
      const proxy = await waitForListening(rec);
      const page = await open('#/tape?name=live', 'tape');
      expect(await page.locator('.row:not(.placeholder)').count()).toBe(0);
      const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy}/openai/v1`, maxRetries: 0 });
      for (let i = 0; i < 3; i++)
        await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `live ${i}` }] });
      await expect.poll(() => page.locator('.row:not(.placeholder)').count(), { timeout: 10_000 }).toBe(3);
      expect(await page.locator('#live-badge').isVisible()).toBe(true);
      await page.close();
    } finally {
      await new Promise((resolve) => (rec.once('exit', resolve), rec.kill('SIGTERM')));
      await llm.close();
    }
  });
});
