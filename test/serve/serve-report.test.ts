import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatServeReport } from '../../src/cli/serve.js';
import { createLogger } from '../../src/log.js';
import { startServe, type ServeMode, type ServeOptions } from '../../src/serve/serve.js';
import { createReplayMatcher } from '../../src/replay/pipeline.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const log = createLogger('silent');
let dir: string;
let upstream: ScriptedUpstream;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-serve-report-'));
  upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

function serveOptions(mode: ServeMode, folder = dir): ServeOptions {
  return {
    mode,
    dir: folder,
    port: 0,
    log,
    record: { routes: [{ prefix: '/openai', upstream: upstream.url }] },
    replay: { routes: [], matcher: (tape) => createReplayMatcher(tape.exchanges, { eager: true }) },
  };
}

const ask = async (baseURL: string, content: string): Promise<string> => {
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL, maxRetries: 0 });
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  return answer.choices[0]?.message.content ?? '';
};

describe('tapedeck serve: the report', () => {
  it('a tape recorded in this run, closed, then opened again (auto replays it) is reported recorded, with the replay', async () => {
    const server = await startServe(serveOptions('auto'));
    const base = `${server.url}/@again`;
    expect(await ask(`${base}/openai/v1`, 'once')).toBe('echo: once');
    await fetch(base, { method: 'DELETE' });
    // The same tape again (a retried test): replayed from what was just recorded.
    expect(await ask(`${base}/openai/v1`, 'once')).toBe('echo: once');
    const report = await server.close();
    expect(report).toEqual([
      { tape: 'again', mode: 'record', recorded: 1, replayed: 1, missed: 0, live: 0, similar: 0, blocked: 0, faults: 0 },
    ]);
    expect(formatServeReport(report)).toEqual([
      '1 tape(s): 1 recorded, 0 replayed',
      '  again  recorded 1 exchange(s); opened again: replayed 1, missed 0',
    ]);
    expect(upstream.requests).toHaveLength(1);
  });

  it('a tape that could not be opened at first, then was, is reported as it was opened (the failure is not kept)', async () => {
    const server = await startServe(serveOptions('replay'));
    const base = `${server.url}/@later`;
    await expect(ask(`${base}/openai/v1`, 'q')).rejects.toThrow(/404/);
    const rec = await startServe(serveOptions('record'));
    await ask(`${rec.url}/@later/openai/v1`, 'q');
    await rec.close();
    expect(await ask(`${base}/openai/v1`, 'q')).toBe('echo: q');
    expect(await server.close()).toEqual([
      { tape: 'later', mode: 'replay', recorded: 0, replayed: 1, missed: 0, live: 0, similar: 0, blocked: 0, faults: 0 },
    ]);
  });

  it('refuses tape names that leave the folder or become ".." once ".jsonl" is taken off, before any tape is opened', async () => {
    const root = path.join(dir, 'names');
    const server = await startServe(serveOptions('auto', path.join(root, 'tapes')));
    const names = ['...jsonl', '..jsonl', '.jsonl', 'a%2F..jsonl', '..%2Fescape', 'a%2F..%2F..%2Fescape'];
    for (const name of names) {
      const res = await fetch(`${server.url}/@${name}/openai/v1/chat/completions`, { method: 'POST', body: '{}' });
      expect(res.status, `${name}: ${await res.clone().text()}`).toBe(400);
      expect(await res.text(), name).toContain('invalid tape name');
      const closing = await fetch(`${server.url}/@${name}`, { method: 'DELETE' });
      expect(closing.status, name).toBe(400);
    }
    const byHeader = await fetch(`${server.url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-tapedeck-tape': '...jsonl' },
      body: '{}',
    });
    expect(byHeader.status).toBe(400);
    expect(await server.close()).toEqual([]);
    expect(existsSync(root)).toBe(false);
  });
});
