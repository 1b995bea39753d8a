import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTapedeckError } from '../../src/errors.js';
import { describeExchange } from '../../src/providers/describe.js';
import { allowLiveFor, createSideEffectPolicy, loadSideEffects, policyForTape } from '../../src/replay/side-effects.js';
import { renderSideEffectsFile, suggestSideEffects, suggestTool } from '../../src/replay/side-effects-init.js';
import { createTapeWriter, type NewExchange } from '../../src/tape/stores/tape-writer.js';
import { loadTape } from '../../src/tape/tape-reader.js';
import { runCli } from '../helpers/cli.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-side-effects-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOOLS = [
  { name: 'read_text_file', description: 'Read a file', annotations: { readOnlyHint: true } },
  { name: 'write_file', description: 'Create or overwrite a file', annotations: { readOnlyHint: false, destructiveHint: true } },
  { name: 'create_directory', description: 'Make a directory', annotations: { readOnlyHint: false, destructiveHint: false } },
  { name: 'send_message', description: 'Sends a chat message' },
  { name: 'list_rooms', description: 'All rooms you can see' },
  { name: 'frobnicate', description: 'Posts the widget to the team' },
  { name: 'mystery', description: 'Does a thing' },
];

function rpcExchange(request: unknown, result: unknown): NewExchange {
  return describeExchange({
    startedAt: new Date().toISOString(),
    offsetMs: 0,
    transport: 'stdio',
    route: 'stdio:demo',
    request: { method: 'POST', path: '/', query: [], headers: {}, body: { kind: 'json', json: request } },
    response: { status: 200, headers: {}, body: { kind: 'json', json: { jsonrpc: '2.0', id: (request as { id: number }).id, result } } },
    timing: { durationMs: 1 },
  });
}

describe('side-effects file', () => {
  it('loads the documented example and decides per tool and per HTTP call, with reasons', () => {
    const file = loadSideEffects(path.join(ROOT, 'side_effects.example.yaml'));
    expect(file.done).toBe(true);
    const policy = createSideEffectPolicy({ file, recordedAnnotations: new Map([['get_weather', { readOnlyHint: true }]]) });
    expect(policy.isSideEffect('write_file')).toBe(true);
    expect(policy.classifyTool('write_file').reason).toMatch(/side-effects file marks "write_file" as a side effect/);
    expect(policy.isSideEffect('read_text_file')).toBe(false);
    expect(policy.isSideEffect('get_weather')).toBe(false);
    expect(policy.isSideEffect('unknown_tool')).toBe(true);
    expect(policy.isSideEffect('unknown_tool', { readOnlyHint: true })).toBe(false);
    expect(policy.httpSideEffect('/payments', 'post', '/v1/charges').sideEffect).toBe(true);
    expect(policy.httpSideEffect('/payments', 'GET', '/v1/charges').sideEffect).toBe(false);
    expect(policy.httpSideEffect('/github', 'POST', '/repos/x/issues').sideEffect).toBe(true);
    expect(policy.httpSideEffect('/github', 'POST', '/graphql').sideEffect).toBe(false);
    expect(policy.httpSideEffect('https://hooks.slack.com', 'POST', '/services/T0/B0').sideEffect).toBe(true);
    const allow = allowLiveFor(policy);
    expect(allow({ route: { prefix: '/payments' }, method: 'DELETE', path: '/v1/x' })).toEqual({
      allowed: false,
      reason: expect.stringMatching(/side effect/),
    });
    expect(allow({ route: { prefix: '/openai' }, method: 'POST', path: '/v1/chat/completions' })).toEqual({ allowed: true });
  });

  it('without a file, a tool is a side effect unless the tape recorded it read-only', () => {
    const policy = policyForTape([
      { ...rpcExchange({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { tools: TOOLS }), type: 'exchange', id: '0', seq: 0 },
    ]);
    expect(policy.isSideEffect('read_text_file')).toBe(false);
    expect(policy.isSideEffect('list_rooms')).toBe(true);
    expect(policy.classifyTool('list_rooms').reason).toMatch(/no side-effects file was given/);
  });

  it("says what the tape knew of a tool's annotations: none listed at all, not listed, listed without any, or not read-only", () => {
    const listed = {
      ...rpcExchange({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { tools: TOOLS }),
      type: 'exchange' as const,
      id: '0',
      seq: 0,
    };
    const called = {
      ...rpcExchange({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'send_message', arguments: {} } }, { content: [] }),
      type: 'exchange' as const,
      id: '1',
      seq: 1,
    };
    expect(policyForTape([called]).classifyTool('send_message').reason).toBe(
      '"send_message" counts as a side effect: no side-effects file was given, and the tape has no tools/list answer to read its annotations from (the client never listed the tools while recording)',
    );
    const policy = policyForTape([listed, called]);
    expect(policy.classifyTool('unlisted').reason).toBe(
      '"unlisted" counts as a side effect: no side-effects file was given, and the tape\'s tools/list answer does not list it',
    );
    expect(policy.classifyTool('send_message').reason).toBe(
      '"send_message" counts as a side effect: no side-effects file was given, and tools/list gave it no annotations',
    );
    expect(policy.classifyTool('write_file').reason).toBe(
      '"write_file" counts as a side effect: no side-effects file was given, and its annotations do not say it is read-only',
    );
  });

  it('refuses a file that is not reviewed, or not valid, with one line', () => {
    const notDone = path.join(dir, 'not-done.yaml');
    writeFileSync(notDone, 'tools:\n  write_file: false\ndone: false\n');
    const err = (() => {
      try {
        loadSideEffects(notDone);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isTapedeckError(err) && err.code).toBe('SIDE_EFFECTS_NOT_REVIEWED');
    expect((err as Error).message).not.toContain('\n');
    // What it would decide, so the person reviewing knows what is at stake.
    expect((err as Error).message).toBe(
      `side-effects file ${notDone} is not reviewed (it marks write_file as a side effect): check every entry, then set "done: true"`,
    );
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(bad, 'tools:\n  write_file: maybe\ndone: true\n');
    expect(() => loadSideEffects(bad)).toThrow(/tools\.write_file/);
  });
});

describe('side-effects init', () => {
  it('suggests from annotations first, then name and description keywords, each with its reason', () => {
    expect(suggestTool('read_text_file', { readOnlyHint: true })).toMatchObject({ safe: true, reason: 'annotated readOnlyHint: true' });
    expect(suggestTool('get_and_delete', { destructiveHint: true })).toMatchObject({
      safe: false,
      reason: 'annotated destructiveHint: true',
    });
    expect(suggestTool('sendMessage')).toMatchObject({ safe: false, reason: 'name contains "send"' });
    expect(suggestTool('list_rooms')).toMatchObject({ safe: true });
    expect(suggestTool('frobnicate', undefined, 'Posts the widget')).toMatchObject({
      safe: false,
      reason: 'description contains "posts" (a form of "post")',
    });
    expect(suggestTool('mystery', undefined, 'Does a thing')).toMatchObject({ safe: false });
  });

  it('writes a commented file with done: false that replay refuses until reviewed, through the CLI', async () => {
    const writer = await createTapeWriter({ dir, name: 'agent', header: { mode: 'record', routes: [] } });
    await writer.append(rpcExchange({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { tools: TOOLS }));
    await writer.append(
      rpcExchange({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'unlisted_tool', arguments: {} } }, { content: [] }),
    );
    await writer.close();
    const out = path.join(dir, 'side_effects.yaml');
    const res = await runCli(['side-effects', 'init', '--tape', 'agent', '--dir', dir, '--out', out]);
    expect(res.code).toBe(0);
    const text = readFileSync(out, 'utf8');
    expect(text).toMatch(/^ {2}write_file: false +# annotated destructiveHint: true$/m);
    expect(text).toMatch(/^ {2}read_text_file: true +# annotated readOnlyHint: true$/m);
    expect(text).toMatch(/^ {2}unlisted_tool: false +# .*never listed/m);
    expect(text).toMatch(/^done: false$/m);
    const parsed = loadSideEffects(out, { requireDone: false });
    expect(parsed.tools).toMatchObject({
      write_file: false,
      read_text_file: true,
      create_directory: false,
      send_message: false,
      list_rooms: true,
      mystery: false,
    });
    expect(suggestSideEffects((await loadTape(dir, 'agent')).exchanges).tools).toHaveLength(TOOLS.length + 1);
    expect(renderSideEffectsFile('agent', { tools: [], http: [] })).toContain('tools: {}');

    const replay = await runCli(['replay', '--tape', 'agent', '--dir', dir, '--port', '0', '--side-effects', out]);
    expect(replay.code).not.toBe(0);
    expect(replay.stderr.trim().split('\n')).toHaveLength(1);
    expect(replay.stderr).toMatch(/not reviewed.*done: true/);
    const stdio = await runCli(['mcp-stdio', '--tape', 'agent', '--dir', dir, '--mode', 'replay', '--side-effects', out]);
    expect(stdio.code).not.toBe(0);
    expect(stdio.stderr).toMatch(/not reviewed/);
  });
}, 30_000);
