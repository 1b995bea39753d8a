/**
 * JSON nested too deeply to walk: a body 5,000 levels deep (~10 KB) is recorded (as text) and its client answered
 * in full, then replayed; a tape line 100,000 levels deep is skipped with its line number by replay, show, export
 * and the viewer, which serve the rest. A tape that starts with a UTF-8 byte order mark reads as any other.
 */
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startProxy } from '../../src/front/server.js';
import { createReplayMatcher } from '../../src/replay/pipeline.js';
import { encodeBody } from '../../src/tape/body.js';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../../src/tape/json-depth.js';
import { loadTape } from '../../src/tape/tape-reader.js';
import { startViewer } from '../../src/view/viewer.js';
import { runCli } from '../helpers/cli.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { llmCall, writeTape } from '../view/synthetic-tape.js';

const log = createLogger('silent');
const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
let dir: string;
let upstream: ScriptedUpstream;
/** An upstream that answers with JSON 5,000 levels deep (written as text: JSON.stringify cannot). */
let deepUpstream: Server;
const DEEP_ANSWER = `{"nested":${nested(5000)}}`;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-deep-'));
  upstream = await startScriptedUpstream(() => openaiChat({ content: 'the whole answer' }));
  deepUpstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(DEEP_ANSWER));
  });
  await new Promise<void>((r) => deepUpstream.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await upstream.close();
  await new Promise((r) => deepUpstream.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('how deep is too deep', () => {
  it.each([
    [nested(MAX_JSON_DEPTH), false],
    [nested(MAX_JSON_DEPTH + 1), true],
    [`{"a":"${'['.repeat(5000)}"}`, false], // brackets inside a string do not count
    [`{"a":"\\"${'['.repeat(600)}\\\\","b":${nested(600)}}`, true], // escaped quotes and backslashes
    ['{"a":' + '{"b":'.repeat(600) + '1' + '}'.repeat(601), true],
  ])('%#', (text, deep) => expect(exceedsJsonDepth(text)).toBe(deep));

  it('a body too deep to walk is kept as text, byte for byte', () => {
    const text = `{"messages":${nested(5000)}}`;
    expect(encodeBody(Buffer.from(text), 'application/json')).toEqual({ kind: 'text', text });
    expect(encodeBody(Buffer.from('{"a":[[1]]}'), 'application/json')).toEqual({ kind: 'json', json: { a: [[1]] } });
  });
});

describe('recording and replaying a body 5,000 levels deep', () => {
  const body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"metadata":${nested(5000)}}`;
  const ask = (url: string): Promise<Response> =>
    fetch(`${url}/openai/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('records it and answers the client in full', async () => {
    const deepUrl = `http://127.0.0.1:${(deepUpstream.address() as AddressInfo).port}`;
    const proxy = await startProxy({
      mode: 'record',
      tape: 'deep',
      dir,
      port: 0,
      routes: [
        { prefix: '/openai', upstream: upstream.url },
        { prefix: '/deep', upstream: deepUrl },
      ],
      log,
    });
    const res = await ask(proxy.url);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe('the whole answer');
    // An upstream answering that deep: the client gets it whole too.
    const deep = await fetch(`${proxy.url}/deep/v1/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(deep.status, await deep.clone().text()).toBe(200);
    expect(await deep.text()).toBe(DEEP_ANSWER);
    await proxy.close();

    const tape = await loadTape(dir, 'deep');
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges).toHaveLength(2);
    expect(tape.exchanges[0]?.request.body).toEqual({ kind: 'text', text: body });
    expect(tape.exchanges[1]?.response?.body?.kind).toBe('text');
  });

  it('replays it', async () => {
    const proxy = await startProxy({
      mode: 'replay',
      tape: 'deep',
      dir,
      port: 0,
      routes: [],
      saveAs: 'deep-replay',
      matcher: (t) => createReplayMatcher(t.exchanges),
      log,
    });
    const res = await ask(proxy.url);
    await proxy.close();
    expect(res.status).toBe(200);
    expect(res.headers.get('x-tapedeck-match')).toBe('exact');
    expect(await res.text()).toContain('the whole answer');
  });
});

describe('a tape line 100,000 levels deep', () => {
  beforeAll(async () => {
    await writeTape(dir, 'abyss', [llmCall(0, { answer: 'first' }), llmCall(10, { answer: 'second' }), llmCall(20, { answer: 'third' })]);
    // The second exchange's body replaced by hand with one 100,000 levels deep.
    const file = path.join(dir, 'abyss.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    const ex = JSON.parse(lines[2]!) as { request: { body: unknown } };
    ex.request.body = { kind: 'json', json: '__DEEP__' };
    lines[2] = JSON.stringify(ex).replace('"__DEEP__"', nested(100_000));
    writeFileSync(file, lines.join('\n'));
  });

  it('replay skips it with its line number and serves the rest', async () => {
    const tape = await loadTape(dir, 'abyss');
    expect(tape.problems).toEqual([{ line: 3, message: expect.stringMatching(/nested deeper than 512 levels.*skipped/) }]);
    expect(tape.exchanges.map((e) => e.llm?.outputText)).toEqual(['first', 'third']);
    const proxy = await startProxy({ mode: 'replay', tape: 'abyss', dir, port: 0, routes: [], saveAs: 'abyss-replay', log });
    expect(proxy.source?.exchanges).toHaveLength(2);
    await proxy.close();
  });

  it('show and export say which line and carry on', async () => {
    const show = await runCli(['show', 'abyss', '--dir', dir]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stderr).toMatch(/abyss: line 3: nested deeper than 512 levels/);
    expect(show.stdout).toContain('first');
    const har = await runCli(['export', 'abyss', '--format', 'har', '--dir', dir]);
    expect(har.code, har.stderr).toBe(0);
    expect(har.stderr).toMatch(/line 3/);
    expect((JSON.parse(har.stdout) as { log: { entries: unknown[] } }).log.entries).toHaveLength(2);
  });

  it('the viewer serves the tape (no 500) and lists the problem', async () => {
    const viewer = await startViewer({ dir, port: 0, log });
    try {
      const res = await fetch(`${viewer.url}api/tape?name=abyss`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { total: number; problems: { line: number }[] };
      expect(body.total).toBe(2);
      expect(body.problems.map((p) => p.line)).toEqual([3]);
    } finally {
      await viewer.close();
    }
  });
});

describe('a tape that starts with a UTF-8 byte order mark', () => {
  it('reads as any other', async () => {
    await writeTape(dir, 'bom', [llmCall(0, { answer: 'with a BOM' })]);
    const file = path.join(dir, 'bom.jsonl');
    writeFileSync(file, '\uFEFF' + readFileSync(file, 'utf8'));
    const tape = await loadTape(dir, 'bom');
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges[0]?.llm?.outputText).toBe('with a BOM');
    const list = await runCli(['list', '--dir', dir]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('bom');
  });
});
