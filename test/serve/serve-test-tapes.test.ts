import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatServeReport } from '../../src/cli/serve.js';
import { createLogger } from '../../src/log.js';
import { startServe, type ServeMode, type ServeOptions } from '../../src/serve/serve.js';
import { createReplayMatcher } from '../../src/replay/pipeline.js';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { tapeNameForTest } from '../../src/tape/test-tape-name.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const log = createLogger('silent');
let dir: string;
let upstream: ScriptedUpstream;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-serve-test-tapes-'));
  upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

function serveOptions(mode: ServeMode, upstreamUrl = upstream.url): ServeOptions {
  return {
    mode,
    dir,
    port: 0,
    log,
    record: { routes: [{ prefix: '/openai', upstream: upstreamUrl }] },
    replay: { routes: [], matcher: (tape) => createReplayMatcher(tape.exchanges, { eager: true }) },
  };
}

/** What a helper asks: the tape of the test named by its file and names. */
const tapeOf = async (serveUrl: string, file: string, ...names: string[]): Promise<{ status: number; body: Record<string, unknown> }> => {
  const query = new URLSearchParams([['file', file], ...names.map((n): [string, string] => ['name', n])]);
  const res = await fetch(`${serveUrl}/@?${query.toString()}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

const ask = async (baseURL: string, content: string): Promise<string> => {
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL, maxRetries: 0 });
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  return answer.choices[0]?.message.content ?? '';
};

describe('tapedeck serve: the tape of a test (GET /@?file=...&name=...)', () => {
  it('answers the tape the shared rule gives: the same for a test every time, distinct for tests a slug confuses', async () => {
    const server = await startServe(serveOptions('auto'));
    try {
      const plus = await tapeOf(server.url, 'tests/test_x.py', 'test_calc[1+1]');
      const minus = await tapeOf(server.url, 'tests/test_x.py', 'test_calc[1-1]');
      expect(plus).toEqual({ status: 200, body: { tape: tapeNameForTest({ file: 'tests/test_x.py', names: ['test_calc[1+1]'] }) } });
      expect(minus.body.tape).not.toBe(plus.body.tape);
      expect(await tapeOf(server.url, 'tests/test_x.py', 'test_calc[1+1]')).toEqual(plus);
      expect((await tapeOf(server.url, 'w.test.ts', '天気', '東京の天気')).body).toEqual({ tape: 'w/天気/東京の天気' });
      // The answer names a tape a request then reaches, %-encoded in the base URL like any tape name.
      const tokyo = `${server.url}/@${encodeURIComponent('w/天気/東京の天気')}/openai/v1`;
      expect(await ask(tokyo, 'tokyo')).toBe('echo: tokyo');
      expect((await createDirStore(dir).load('w/天気/東京の天気')).exchanges).toHaveLength(1);
      // A header cannot carry such a name as it is: %-encoded, as in the path.
      const byHeader = new OpenAI({
        apiKey: 'sk-test',
        baseURL: `${server.url}/openai/v1`,
        maxRetries: 0,
        defaultHeaders: { 'x-tapedeck-tape': encodeURIComponent('w/天気/東京の天気') },
      });
      const answer = await byHeader.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'tokyo' }] });
      expect(answer.choices[0]?.message.content).toBe('echo: tokyo');
    } finally {
      await server.close();
    }
  });

  it('refuses two different tests that would share a tape, naming both; and a query that names no test', async () => {
    const server = await startServe(serveOptions('auto'));
    try {
      expect((await tapeOf(server.url, 'tests/a.test.ts', 'works')).status).toBe(200);
      const clash = await tapeOf(server.url, 'tests/a.spec.ts', 'works');
      expect(clash.status).toBe(409);
      expect(JSON.stringify(clash.body)).toContain(
        'tests \\"tests/a.test.ts > works\\" and \\"tests/a.spec.ts > works\\" would share the tape \\"tests/a/works\\"',
      );
      const none = await tapeOf(server.url, 'tests/a.test.ts');
      expect(none.status).toBe(400);
      expect(JSON.stringify(none.body)).toContain('?file=FILE&name=NAME');
      // Only tapedeck's own names may ask (as for every request addressed to tapedeck itself).
      const foreign = await new Promise<number>((resolve, reject) => {
        const target = new URL(server.url);
        httpRequest({ host: target.hostname, port: target.port, path: '/@?file=a&name=b', headers: { host: 'evil.example' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
      expect(foreign).toBe(403);
    } finally {
      expect(await server.close()).toEqual([]);
    }
  });

  it("says where a test's recording under the earlier naming rule is: in the answer, a replay's 404 and the report", async () => {
    // A tape recorded before the rule changed: both parametrized tests shared it.
    const rec = await startServe(serveOptions('record'));
    await ask(`${rec.url}/@${encodeURIComponent('old/test_calc-1-1')}/openai/v1`, 'calc');
    await rec.close();

    const server = await startServe(serveOptions('replay', 'http://127.0.0.1:9'));
    const { body } = await tapeOf(server.url, 'old.py', 'test_calc[1+1]');
    expect(body).toEqual({ tape: tapeNameForTest({ file: 'old.py', names: ['test_calc[1+1]'] }), earlier: 'old/test_calc-1-1' });
    const tape = body.tape as string;
    const err = await ask(`${server.url}/@${encodeURIComponent(tape)}/openai/v1`, 'calc').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as Error).message).toContain(`no tape "${tape}": this test's recording is probably the tape "old/test_calc-1-1"`);
    const report = await server.close();
    expect(report).toMatchObject([{ tape, earlier: 'old/test_calc-1-1', error: { code: 'TAPE_NOT_FOUND' } }]);
    expect(formatServeReport(report)[1]).toContain('rename it to');

    // Recorded afresh in auto mode: the report says the earlier tape is left over.
    const auto = await startServe(serveOptions('auto'));
    expect((await tapeOf(auto.url, 'old.py', 'test_calc[1+1]')).body.earlier).toBe('old/test_calc-1-1');
    expect(await ask(`${auto.url}/@${encodeURIComponent(tape)}/openai/v1`, 'calc')).toBe('echo: calc');
    const lines = formatServeReport(await auto.close());
    expect(lines[1]).toMatch(/recorded 1 exchange\(s\); "old\/test_calc-1-1", this test's tape by the earlier naming rule, is still there/);
    // Once its own tape exists, no more word of the earlier one.
    const later = await startServe(serveOptions('auto'));
    expect((await tapeOf(later.url, 'old.py', 'test_calc[1+1]')).body).toEqual({ tape });
    await later.close();
  });
});
