/**
 * Credentials a browser puts in a WebSocket upgrade, with the official SDK's browser client (`OpenAIRealtimeWebSocket`)
 * under tapedeck in wrapper mode: OpenAI's `Sec-WebSocket-Protocol: realtime, openai-insecure-api-key.<ek_ key>`,
 * Azure OpenAI's `?api-key=` and `?Authorization=Bearer ...`. Each goes upstream and never onto the tape (found by
 * its place, not its shape), the replay with another key matches, and `tapedeck scan` finds them on a tape written
 * before they were redacted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../../src/tape/tape-reader.js';
import { runCli } from '../../helpers/cli.js';
import { runCliInProcess } from '../../helpers/cli-in-process.js';
import { realtimeScript, startWsUpstream, type WsUpstream } from '../../helpers/ws-upstream.js';
import { handExchange, handHeader, writeHandTape } from '../../helpers/hand-tape.js';

const AGENT = path.join(import.meta.dirname, 'fixtures', 'browser-realtime-agent.mjs');
const EPHEMERAL = 'ek_68a1b2c3d4e5f60718293a4b5c6d7e8f';
const AZURE_KEY = '0123456789abcdef0123456789abcdef';
const AZURE_TOKEN = 'aad-token-0123456789';

let dir: string;
let upstream: WsUpstream;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-credentials-'));
  env = { TAPEDECK_CA_DIR: path.join(dir, 'ca') };
  upstream = await startWsUpstream(realtimeScript());
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const lines = (stdout: string): unknown[] =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);

const record = (tape: string, mode: string, keys: NodeJS.ProcessEnv): ReturnType<typeof runCli> =>
  runCli(
    [
      'record',
      '--tape',
      tape,
      '--dir',
      dir,
      '--route',
      `/openai=${upstream.url}`,
      '--route',
      `/azure=${upstream.url}`,
      '--',
      process.execPath,
      AGENT,
      mode,
    ],
    { ...env, ...keys },
  );
const replay = (tape: string, mode: string, keys: NodeJS.ProcessEnv): ReturnType<typeof runCli> =>
  runCli(['replay', '--tape', tape, '--dir', dir, '--save-as', `${tape}-replay`, '--', process.execPath, AGENT, mode], { ...env, ...keys });

describe('the browser client of the openai SDK under tapedeck', () => {
  it('OpenAI: the ek_ key in Sec-WebSocket-Protocol goes upstream, not onto the tape; replay with another key matches', async () => {
    const before = upstream.connections;
    const rec = await record('browser', 'openai', { OPENAI_API_KEY: EPHEMERAL });
    expect(rec.code, rec.stderr).toBe(0);
    const recorded = lines(rec.stdout);
    expect(recorded).toContainEqual(expect.objectContaining({ type: 'response.output_text.done', text: 'It is sunny in Paris.' }));
    expect(upstream.connections).toBe(before + 1);
    expect(upstream.upgrades.at(-1)?.['sec-websocket-protocol']).toBe(`realtime,openai-insecure-api-key.${EPHEMERAL}`);

    const file = path.join(dir, 'browser.jsonl');
    const tape = await readTape(file);
    const session = tape.exchanges[0]!;
    expect(session.request.headers['sec-websocket-protocol']).toBe('realtime,openai-insecure-api-key.[REDACTED]');
    expect(session.response?.headers['sec-websocket-protocol']).toBe('realtime');
    expect(JSON.stringify(tape)).not.toContain(EPHEMERAL.slice(3));
    expect((await runCliInProcess(['scan', 'browser', '--dir', dir])).code).toBe(0);

    const rep = await replay('browser', 'openai', { OPENAI_API_KEY: 'ek_another_key_given_to_the_browser' });
    expect(rep.code, rep.stderr).toBe(0);
    expect(lines(rep.stdout)).toEqual(recorded);
    expect(upstream.connections).toBe(before + 1);
  });

  it.each([
    ['azure-key', { AZURE_OPENAI_API_KEY: AZURE_KEY }, 'api-key', AZURE_KEY, { AZURE_OPENAI_API_KEY: 'fedcba9876543210fedcba9876543210' }],
    ['azure-token', { AZURE_TOKEN }, 'Authorization', `Bearer ${AZURE_TOKEN}`, { AZURE_TOKEN: 'aad-token-another' }],
  ] as const)(
    'Azure (%s): the credential in the query goes upstream, not onto the tape; replay with another matches',
    async (mode, keys, name, value, other) => {
      const before = upstream.connections;
      const rec = await record(mode, mode, keys);
      expect(rec.code, rec.stderr).toBe(0);
      const recorded = lines(rec.stdout);
      expect(recorded).toContainEqual(expect.objectContaining({ type: 'response.output_text.done', text: 'It is sunny in Paris.' }));
      expect(new URL(upstream.urls.at(-1)!, 'http://x').searchParams.get(name)).toBe(value);

      const tape = await readTape(path.join(dir, `${mode}.jsonl`));
      const session = tape.exchanges[0]!;
      expect(session.request.path).toBe('/openai/realtime');
      expect(session.request.query).toEqual([
        ['api-version', '2025-04-01-preview'],
        ['deployment', 'gpt-realtime'],
        [name, '[REDACTED]'],
      ]);
      expect(JSON.stringify(tape)).not.toContain(value.replace('Bearer ', ''));
      expect((await runCliInProcess(['scan', mode, '--dir', dir])).code).toBe(0);

      const rep = await replay(mode, mode, other);
      expect(rep.code, rep.stderr).toBe(0);
      expect(lines(rep.stdout)).toEqual(recorded);
      expect(upstream.connections).toBe(before + 1);
    },
  );
});

describe('tapedeck scan on a tape written before these were redacted', () => {
  it('finds the subprotocol key, the query credentials and the upstream URL key, without printing them', async () => {
    const header = handHeader('old-ws', {
      format: 2,
      routes: [{ prefix: '/azure', upstream: 'https://x.openai.azure.com/?subscription-key=apim-sub-key-0001' }],
    });
    const session = handExchange(0, {
      transport: 'websocket',
      route: '/openai',
      upstream: 'https://api.openai.com?api_key=upstream-query-key-0002',
      request: {
        method: 'GET',
        path: '/v1/realtime',
        query: [
          ['model', 'gpt-realtime'],
          ['api-key', 'azure-plain-key-0003'],
          ['subscription-key', 'apim-sub-key-0004'],
        ],
        headers: { 'sec-websocket-protocol': `realtime, openai-insecure-api-key.${EPHEMERAL}, openai-organization.org-abc` },
        body: { kind: 'empty' },
      },
      response: { status: 101, headers: { 'sec-websocket-protocol': 'realtime' } },
      websocket: { frames: [] },
    });
    writeHandTape(path.join(dir, 'old-ws.jsonl'), [header, session]);
    const r = await runCliInProcess(['scan', 'old-ws', '--dir', dir, '--json']);
    expect(r.code, r.stderr).toBe(1);
    for (const secret of [EPHEMERAL, 'apim-sub-key', 'upstream-query-key', 'azure-plain-key']) expect(r.stdout).not.toContain(secret);
    const findings = JSON.parse(r.stdout) as { line: number; path: string; rule: string; preview: string }[];
    expect(findings.map((f) => [f.line, f.path, f.rule, f.preview])).toEqual([
      [1, 'routes[0].upstream.query.subscription-key', 'secret-query', `…(${'apim-sub-key-0001'.length} chars)`],
      [2, 'upstream.query.api_key', 'secret-query', `…(${'upstream-query-key-0002'.length} chars)`],
      [2, 'request.query.api-key', 'secret-query', `…(${'azure-plain-key-0003'.length} chars)`],
      [2, 'request.query.subscription-key', 'secret-query', `…(${'apim-sub-key-0004'.length} chars)`],
      [2, 'request.headers.sec-websocket-protocol', 'secret-subprotocol', `…(${EPHEMERAL.length} chars)`],
    ]);
  });
});
