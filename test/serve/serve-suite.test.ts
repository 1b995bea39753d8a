/**
 * What a suite asks of `tapedeck serve` beyond a tape per test: faults with a plan per test's tape (HTTP, MCP,
 * WebSocket), the `--expect` contract judged when a test's tape is closed, tests re-recorded by pattern while the
 * others replay, tapes too old to replay, and orphan tapes listed and deleted.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { WebSocket } from 'ws';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../../src/engine/faults/fault-plan.js';
import { parseFaultRule } from '../../src/engine/faults/fault-rules.js';
import { expectJudge, parseExpect } from '../../src/inspect/expected-calls.js';
import { createLogger } from '../../src/log.js';
import { createMcpResponder } from '../../src/transports/mcp/responder.js';
import { startServe, type ServeMode, type ServeOptions, type TapeReport } from '../../src/serve/serve.js';
import { createTestPattern } from '../../src/serve/test-pattern.js';
import { createReplayMatcher } from '../../src/replay/pipeline.js';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { tapeNameForTest } from '../../src/tape/test-tape-name.js';
import { startEverything, type EverythingServer } from '../helpers/everything-server.js';
import { weatherAgent } from '../helpers/realtime-agent.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { realtimeScript, startWsUpstream } from '../helpers/ws-upstream.js';

const log = createLogger('silent');
let dir: string;
let upstream: ScriptedUpstream;
beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-serve-suite-'));
  upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
});
afterEach(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

function serveOptions(mode: ServeMode, extra: Partial<ServeOptions> = {}, upstreamUrl = upstream.url): ServeOptions {
  return {
    mode,
    dir,
    port: 0,
    log,
    record: { routes: [{ prefix: '/openai', upstream: upstreamUrl }] },
    replay: {
      routes: [],
      matcher: (tape) => createReplayMatcher(tape.exchanges, { eager: true }),
      responders: (_tape, opening) => [createMcpResponder(opening.faults ? { faults: opening.faults } : {})],
    },
    ...extra,
  };
}

const ask = async (baseURL: string, content: string): Promise<string> => {
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL, maxRetries: 0 });
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  return answer.choices[0]?.message.content ?? '';
};

/** Record tapes with these calls each (a serve in record mode, stopped). */
async function recordTapes(tapes: Record<string, string[]>): Promise<void> {
  const server = await startServe(serveOptions('record'));
  for (const [tape, calls] of Object.entries(tapes))
    for (const c of calls) await ask(`${server.url}/@${encodeURIComponent(tape)}/openai/v1`, c);
  await server.close();
}

/** What a helper asks for its test: `GET /@?file=...&name=...`. */
async function tapeOfTest(serveUrl: string, file: string, ...names: string[]): Promise<{ status: number; body: Record<string, unknown> }> {
  const query = new URLSearchParams([['file', file], ...names.map((n): [string, string] => ['name', n])]);
  const res = await fetch(`${serveUrl}/@?${query.toString()}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** What a helper does when its test is over: `DELETE /@NAME`; the tape's report row. */
async function endTest(serveUrl: string, tape: string): Promise<TapeReport | null> {
  return ((await (await fetch(`${serveUrl}/@${encodeURIComponent(tape)}`, { method: 'DELETE' })).json()) as { tape: TapeReport | null })
    .tape;
}

/** Make a tape look recorded `days` ago (its header's createdAt). */
function age(tape: string, days: number): void {
  stamp(tape, new Date(Date.now() - days * 86_400_000).toISOString());
}

/** Write `createdAt` into a tape's header, as it is. */
function stamp(tape: string, createdAt: string): void {
  const file = path.join(dir, `${tape}.jsonl`);
  const [head, ...rest] = readFileSync(file, 'utf8').split('\n');
  const header = JSON.parse(head as string) as { createdAt: string };
  header.createdAt = createdAt;
  writeFileSync(file, [JSON.stringify(header), ...rest].join('\n'));
}

describe('serve --faults: a plan per test tape', () => {
  const rule = parseFaultRule('{when: {api: openai, call: 2}, then: {status: 429, retryAfter: 0}}');

  it("each test's second call is rate-limited, counted within its own tape, recording and replaying", async () => {
    const opts = (mode: ServeMode): ServeOptions => serveOptions(mode, { faults: () => createFaultPlan([rule]) });
    const run = async (mode: ServeMode): Promise<string[][]> => {
      const server = await startServe(opts(mode));
      try {
        return await Promise.all(
          ['alpha', 'beta'].map(async (tape) => {
            const url = `${server.url}/@${tape}/openai/v1`;
            const out: string[] = [];
            for (const q of ['one', 'two', 'three'])
              out.push(await ask(url, `${tape} ${q}`).catch((err: Error) => err.message.slice(0, 3)));
            return out;
          }),
        );
      } finally {
        await server.close();
      }
    };
    expect(await run('auto')).toEqual([
      ['echo: alpha one', '429', 'echo: alpha three'],
      ['echo: beta one', '429', 'echo: beta three'],
    ]);
    // The recording has the fault as injected (not sent upstream); the replay injects it again, per tape.
    expect(upstream.requests).toHaveLength(4);
    expect(await run('replay')).toEqual([
      ['echo: alpha one', '429', 'echo: alpha three'],
      ['echo: beta one', '429', 'echo: beta three'],
    ]);
  });

  it("a retried test sees the same answers on every run: the injected 429 is never replayed as the upstream's", async () => {
    // One test, three calls, one retry on a 429 (issue 39: the recording run saw 200 429 200 200, every later run
    // 200 429 429: the injected 429 was served from the tape and the rule fired again on top).
    const run = async (): Promise<{ got: string[]; report: TapeReport[] }> => {
      const server = await startServe(serveOptions('auto', { faults: () => createFaultPlan([rule]) }));
      const got: string[] = [];
      let report: TapeReport[] = [];
      try {
        const url = `${server.url}/@retried/openai/v1`;
        for (const q of ['one', 'two', 'three']) {
          const once = (): Promise<string> => ask(url, q).catch((err: Error) => err.message.slice(0, 3));
          const first = await once();
          got.push(first);
          if (first === '429') got.push(await once());
        }
      } finally {
        report = await server.close();
      }
      return { got, report };
    };
    const recording = await run();
    expect(recording.got).toEqual(['echo: one', '429', 'echo: two', 'echo: three']);
    expect(upstream.requests).toHaveLength(3);
    // The close report says what happened: three answers recorded from the upstream, one injected by the rule.
    expect(recording.report).toEqual([expect.objectContaining({ tape: 'retried', mode: 'record', recorded: 4, replayed: 0, faults: 1 })]);
    for (let i = 0; i < 2; i++) {
      const again = await run();
      expect(again.got).toEqual(recording.got);
      expect(again.report).toEqual([expect.objectContaining({ tape: 'retried', mode: 'replay', replayed: 3, missed: 0, faults: 1 })]);
    }
    expect(upstream.requests).toHaveLength(3);
  });

  it('an error tapedeck made when the upstream gave none is never replayed: auto records again, replay misses saying why', async () => {
    // Issue 39 (a newcomer's 7): in auto mode with the upstream unreachable, the test got tapedeck's own 502, the tape
    // kept it as a recording, and every later run replayed the error.
    const unreachable = await startServe(serveOptions('auto', {}, 'http://127.0.0.1:9'));
    try {
      await expect(ask(`${unreachable.url}/@offline/openai/v1`, 'hello')).rejects.toThrow(/^502 .*could not reach/);
    } finally {
      await unreachable.close();
    }
    const [recorded] = (await createDirStore(dir).load('offline')).exchanges;
    expect(recorded?.notes?.answeredBy).toBe('tapedeck');

    const replay = await startServe(serveOptions('replay'));
    try {
      await expect(ask(`${replay.url}/@offline/openai/v1`, 'hello')).rejects.toThrow(
        /^404 .*is not served: its answer is tapedeck's own error, made when the upstream gave none .*record it again/,
      );
    } finally {
      await replay.close();
    }

    const auto = await startServe(serveOptions('auto'));
    let report: TapeReport[] = [];
    try {
      expect(await ask(`${auto.url}/@offline/openai/v1`, 'hello')).toBe('echo: hello');
    } finally {
      report = await auto.close();
    }
    expect(report).toEqual([expect.objectContaining({ tape: 'offline', mode: 'record', recorded: 1, refreshed: 'tapedeck-error' })]);
    const again = (await createDirStore(dir).load('offline')).exchanges;
    expect(again.map((ex) => [ex.response?.status, ex.notes?.answeredBy])).toEqual([[200, undefined]]);
  });

  it('an MCP tool error and a WebSocket close, each from the plan of the tape it is on', async () => {
    const everything: EverythingServer = await startEverything('streamableHttp');
    const ws = await startWsUpstream(realtimeScript());
    try {
      const record = await startServe(
        serveOptions('auto', {
          record: {
            routes: [
              { prefix: '/everything/mcp', upstream: `${everything.url}/mcp` },
              { prefix: '/openai', upstream: ws.url },
            ],
          },
        }),
      );
      const echo = async (serveUrl: string, tape: string): Promise<unknown> => {
        const client = new Client({ name: 'serve-suite', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${serveUrl}/@${tape}/everything/mcp`)));
        const out = await client.callTool({ name: 'echo', arguments: { message: tape } });
        await client.close();
        return out;
      };
      for (const tape of ['mcp-a', 'mcp-b']) await echo(record.url, tape);
      await weatherAgent(`${record.url.replace('http', 'ws')}/@ws-a/openai/v1/realtime?model=gpt-realtime`);
      await record.close();
      await everything.stop();
      await ws.close();

      const rules = [
        parseFaultRule("{when: {tool: echo, call: 1}, then: {toolError: 'echo is down'}}"),
        parseFaultRule('{when: {api: openai}, then: {close: {code: 1011, reason: overloaded, afterMessages: 1}}}'),
      ];
      const replay = await startServe(serveOptions('replay', { faults: () => createFaultPlan(rules) }));
      try {
        // Each MCP tape's first echo gets the tool error: the plan is the tape's, not the server's.
        for (const tape of ['mcp-a', 'mcp-b'])
          expect(await echo(replay.url, tape)).toMatchObject({ isError: true, content: [{ type: 'text', text: 'echo is down' }] });
        // The Realtime session is closed by the rule after its first server message.
        const socket = new WebSocket(`${replay.url.replace('http', 'ws')}/@ws-a/openai/v1/realtime?model=gpt-realtime`, 'realtime');
        const got: string[] = [];
        socket.on('message', (d: Buffer) => got.push((JSON.parse(d.toString()) as { type: string }).type));
        const closed = await new Promise<{ code: number; reason: string }>((resolve) =>
          socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
        );
        expect([got, closed]).toEqual([['session.created'], { code: 1011, reason: 'overloaded' }]);
      } finally {
        await replay.close();
      }
    } finally {
      await everything.stop();
      await ws.close();
    }
  }, 60_000);
});

describe('serve --expect: the recorded calls each test must make', () => {
  it("judges a test's tape when it ends: in the answer to DELETE /@NAME and the report, in diff's words", async () => {
    await recordTapes({ alpha: ['first', 'second'], beta: ['only'], gamma: ['g'] });
    const server = await startServe(serveOptions('replay', { expect: expectJudge(parseExpect('llm')) }, 'http://127.0.0.1:9'));
    let report: TapeReport[] = [];
    try {
      // alpha makes one of its two calls: the other is reported missing.
      expect(await ask(`${server.url}/@alpha/openai/v1`, 'first')).toBe('echo: first');
      const alpha = await endTest(server.url, 'alpha');
      expect(alpha?.expect?.expected).toBe(2);
      expect(alpha?.expect?.missing).toEqual([expect.objectContaining({ step: 1, kind: 'LLM', target: 'gpt-4o-mini' })]);
      expect(alpha?.expect?.report[0]).toBe('unused recordings  1 of 2 expected recorded call(s) never made');
      expect(alpha?.expect?.report[1]).toMatch(/^ {2}step 1 {2}LLM gpt-4o-mini {2}.*second/);
      // beta makes its call: nothing missing.
      expect(await ask(`${server.url}/@beta/openai/v1`, 'only')).toBe('echo: only');
      expect((await endTest(server.url, 'beta'))?.expect).toEqual({ expected: 1, missing: [], report: [] });
      // gamma's test made no call at all: its whole recording is missing.
      expect((await endTest(server.url, 'gamma'))?.expect?.report[0]).toBe(
        'unused recordings  1 of 1 expected recorded call(s) never made',
      );
      // A test with no tape has nothing to expect.
      expect(await endTest(server.url, 'no-such-tape')).toBeNull();
    } finally {
      report = await server.close();
    }
    expect(report.map((r) => [r.tape, r.expect?.missing.length])).toEqual([
      ['alpha', 1],
      ['beta', 0],
      ['gamma', 1],
    ]);
  });

  it('judges a tape still open when serve stops; a recorded tape is not judged', async () => {
    await recordTapes({ alpha: ['first', 'second'] });
    const server = await startServe(serveOptions('auto', { expect: expectJudge(parseExpect('all')) }));
    await ask(`${server.url}/@alpha/openai/v1`, 'second');
    await ask(`${server.url}/@fresh/openai/v1`, 'new');
    const report = await server.close();
    expect(report.map((r) => [r.tape, r.mode, r.expect?.missing.map((m) => m.step)])).toEqual([
      ['alpha', 'replay', [0]],
      ['fresh', 'record', undefined],
    ]);
  });
});

describe('serve --rerecord: selected tests record afresh while the others replay', () => {
  it('parses globs: * any characters, ? one, {a,b} either, \\ escapes; over full name, node id or tape', () => {
    const p = createTestPattern(['*celsius*', 'tests/x.py::Test?::{a,b}']);
    expect(p.matches(['tests/agent.test.ts > weather > answers in celsius'])).toBe(true);
    expect(p.matches(['tests/x.py::TestA::b'])).toBe(true);
    expect(p.matches(['tests/x.py::TestAB::b', 'tests/x.py::TestA::c'])).toBe(false);
    expect(createTestPattern(['a\\*']).matches(['a*'])).toBe(true);
    expect(createTestPattern(['a\\*']).matches(['ab'])).toBe(false);
    expect(() => createTestPattern(['{a,b'])).toThrow(/opens a \{ it does not close/);
  });

  it('in replay mode, the test the pattern names goes live and overwrites its tape; the others replay', async () => {
    const celsius = tapeNameForTest({ file: 'w.test.ts', names: ['weather', 'celsius'] });
    const fahrenheit = tapeNameForTest({ file: 'w.test.ts', names: ['weather', 'fahrenheit'] });
    await recordTapes({ [celsius]: ['old question'], [fahrenheit]: ['f'] });
    expect(upstream.requests).toHaveLength(2);
    const server = await startServe(serveOptions('replay', { rerecord: ['w.test.ts > weather > cel*'] }));
    let report: TapeReport[];
    try {
      for (const [name, q] of [
        ['celsius', 'new question'],
        ['fahrenheit', 'f'],
      ] as const) {
        const { body } = await tapeOfTest(server.url, 'w.test.ts', 'weather', name);
        expect(await ask(`${server.url}/@${encodeURIComponent(body.tape as string)}/openai/v1`, q)).toBe(`echo: ${q}`);
        await endTest(server.url, body.tape as string);
      }
    } finally {
      report = await server.close();
    }
    expect(upstream.requests).toHaveLength(3);
    expect(report.map((r) => [r.tape, r.mode, r.refreshed])).toEqual([
      [celsius, 'record', 'rerecord'],
      [fahrenheit, 'replay', undefined],
    ]);
    // Overwritten: the old recording is gone.
    const tape = await createDirStore(dir).load(celsius);
    expect(tape.exchanges.map((e) => lastUserText(e.request.body?.kind === 'json' ? e.request.body.json : undefined))).toEqual([
      'new question',
    ]);
  });

  it('a tape name matches too, for requests that name their tape themselves', async () => {
    await recordTapes({ 'suite/a': ['a'] });
    const server = await startServe(serveOptions('auto', { rerecord: ['suite/*'] }));
    await ask(`${server.url}/@suite%2Fa/openai/v1`, 'a again');
    expect((await server.close()).map((r) => [r.mode, r.refreshed])).toEqual([['record', 'rerecord']]);
  });
});

describe('serve --max-age', () => {
  const maxAge = { ms: 30 * 86_400_000, text: '30d' };

  it('replay mode refuses an older tape with one line saying its age and how to refresh it: to the helper, and to a request', async () => {
    const tape = tapeNameForTest({ file: 'w.test.ts', names: ['old'] });
    await recordTapes({ [tape]: ['q'], young: ['y'] });
    age(tape, 45);
    const server = await startServe(serveOptions('replay', { maxAge }, 'http://127.0.0.1:9'));
    try {
      const asked = await tapeOfTest(server.url, 'w.test.ts', 'old');
      expect(asked.status).toBe(409);
      const message = (asked.body.error as { message: string; type: string }).message;
      expect((asked.body.error as { type: string }).type).toBe('tapedeck_tape_too_old');
      expect(message).toMatch(
        new RegExp(
          `^tape "${tape}" is 45 days old \\(recorded \\d{4}-\\d\\d-\\d\\d\\), older than --max-age 30d: re-record it with TAPEDECK_RERECORD='${tape}'`,
        ),
      );
      expect(message).not.toContain('\n');
      await expect(ask(`${server.url}/@${encodeURIComponent(tape)}/openai/v1`, 'q')).rejects.toThrow(/409 .*is 45 days old/);
      expect(await ask(`${server.url}/@young/openai/v1`, 'y')).toBe('echo: y');
    } finally {
      await server.close();
    }
    // The command the line gives works: the test re-records while the rest replays.
    const again = await startServe(serveOptions('replay', { maxAge, rerecord: [tape] }));
    await ask(`${again.url}/@${encodeURIComponent(tape)}/openai/v1`, 'q');
    expect((await again.close()).map((r) => [r.mode, r.refreshed])).toEqual([['record', 'rerecord']]);
  });

  it('auto mode re-records an older tape (once: then it is young and replays)', async () => {
    await recordTapes({ old: ['q'], young: ['y'] });
    age('old', 31);
    age('young', 29);
    const server = await startServe(serveOptions('auto', { maxAge }));
    await ask(`${server.url}/@old/openai/v1`, 'q');
    await ask(`${server.url}/@young/openai/v1`, 'y');
    await endTest(server.url, 'old');
    await ask(`${server.url}/@old/openai/v1`, 'q');
    const report = await server.close();
    expect(report.map((r) => [r.tape, r.mode, r.refreshed, r.recorded, r.replayed])).toEqual([
      ['old', 'record', 'max-age', 1, 1],
      ['young', 'replay', undefined, 0, 1],
    ]);
    expect(upstream.requests).toHaveLength(3);
  });
});

describe('serve --max-age: a tape whose recording time cannot be read is old', () => {
  const maxAge = { ms: 30 * 86_400_000, text: '30d' };
  const unreadable = ['yesterday-ish', '', '2999-01-01T00:00:00.000Z'];

  it('replay mode refuses it, saying why its age is unknown; auto mode records it afresh', async () => {
    const tapes = unreadable.map((_, i) => `odd-${i}`);
    await recordTapes(Object.fromEntries(tapes.map((t) => [t, ['q']])));
    unreadable.forEach((createdAt, i) => stamp(tapes[i] as string, createdAt));
    const replay = await startServe(serveOptions('replay', { maxAge }, 'http://127.0.0.1:9'));
    try {
      for (const [i, tape] of tapes.entries()) {
        const res = await fetch(`${replay.url}/@${tape}/openai/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'q' }] }),
        });
        expect(res.status).toBe(409);
        const { error } = (await res.json()) as { error: { type: string; message: string } };
        expect(error.type).toBe('tapedeck_tape_too_old');
        expect(error.message).toBe(
          `tape "${tape}" says it was recorded at ${JSON.stringify(unreadable[i])}, which is no time it could have been: its age is ` +
            `unknown, so --max-age 30d takes it as too old: re-record it with TAPEDECK_RERECORD='${tape}' (the vitest and pytest helpers) ` +
            `or tapedeck serve --rerecord '${tape}'`,
        );
      }
    } finally {
      await replay.close();
    }
    const auto = await startServe(serveOptions('auto', { maxAge }));
    for (const tape of tapes) await ask(`${auto.url}/@${tape}/openai/v1`, 'q');
    expect((await auto.close()).map((r) => [r.tape, r.mode, r.refreshed, r.recorded])).toEqual(
      tapes.map((t) => [t, 'record', 'max-age', 1]),
    );
    expect(upstream.requests).toHaveLength(6);
  });
});

describe('serve: orphan tapes', () => {
  it('lists the recordings no test opened, was given or claimed; deletes them when told; never a replay tape', async () => {
    const given = tapeNameForTest({ file: 't.test.ts', names: ['given'] });
    const skipped = tapeNameForTest({ file: 't.test.ts', names: ['skipped'] });
    await recordTapes({ opened: ['o'], [given]: ['g'], [skipped]: ['s'], 'gone/one': ['x'], 'gone/two': ['y'] });
    // A replay tape kept beside its tape is a run's output, no test's.
    const keep = await startServe(serveOptions('replay', { saveReplays: true }, 'http://127.0.0.1:9'));
    await ask(`${keep.url}/@opened/openai/v1`, 'o');
    await keep.close();
    expect((await createDirStore(dir).names()).filter((n) => n.includes('.replay-'))).toHaveLength(1);

    const server = await startServe(serveOptions('replay', {}, 'http://127.0.0.1:9'));
    try {
      await ask(`${server.url}/@opened/openai/v1`, 'o');
      expect((await tapeOfTest(server.url, 't.test.ts', 'given')).status).toBe(200);
      const claim = await fetch(`${server.url}/@/tests`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tests: [{ file: 't.test.ts', names: ['skipped'] }] }),
      });
      expect(await claim.json()).toEqual({ tapes: [skipped] });
      expect(await (await fetch(`${server.url}/@/orphans`)).json()).toEqual({ orphans: ['gone/one', 'gone/two'] });
      expect(await server.orphans()).toEqual(['gone/one', 'gone/two']);
      expect(await (await fetch(`${server.url}/@/orphans`, { method: 'DELETE' })).json()).toEqual({
        removed: ['gone/one', 'gone/two'],
        skipped: [],
      });
      expect(await server.orphans()).toEqual([]);
      const bad = await fetch(`${server.url}/@/tests`, { method: 'POST', body: '{"tests": [{"file": 1}]}' });
      expect(bad.status).toBe(400);
    } finally {
      await server.close();
    }
    const names = await createDirStore(dir).names();
    expect(names.filter((n) => !n.includes('.replay-'))).toEqual([given, 'opened', skipped].sort());
  });
});
