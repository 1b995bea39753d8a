/**
 * What the 2025-11-25 revision added, recorded and replayed with the real `server-everything` and the SDK client:
 * URL-mode elicitation by its request path (a contract like any server request) and by its error path (-32042, then
 * the retry), and a tool call that returns a task, polled to its result.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema, McpError, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import { startEverything, type EverythingServer } from '../../helpers/everything-server.js';

const log = createLogger('silent');
const URL_ARGS = { url: 'https://example.com/consent', message: 'Open the consent page' };
let dir: string;
let server: EverythingServer;

interface Run {
  /** The URL elicitation by its request path: the tool's first text. */
  asked: string;
  /** The error path: the error code the first call got, then the retry's first text. */
  errorCode: number | undefined;
  retried: string;
  /** The task: its statuses as the client saw them, and its result's first text. */
  statuses: string[];
  result: string;
}

async function agent(url: string, answer: ElicitResult): Promise<Run> {
  const client = new Client({ name: 'spec-agent', version: '1' }, { capabilities: { elicitation: { form: {}, url: {} } } });
  client.setRequestHandler(ElicitRequestSchema, () => answer);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const text = (r: unknown): string => ((r as { content: { text: string }[] }).content[0]?.text ?? '').split('\n')[0] ?? '';
  try {
    const asked = await client
      .callTool({ name: 'trigger-url-elicitation', arguments: URL_ARGS })
      .then(text, (err: Error) => `threw: ${err.message}`);
    let errorCode: number | undefined;
    const errorArgs = { ...URL_ARGS, url: 'https://example.com/second', errorPath: true };
    try {
      await client.callTool({ name: 'trigger-url-elicitation', arguments: errorArgs });
    } catch (err) {
      errorCode = err instanceof McpError ? err.code : undefined;
    }
    const retried = await client
      .callTool({ name: 'trigger-url-elicitation', arguments: errorArgs })
      .then(text, (err: Error) => `threw: ${err.message}`);
    const statuses: string[] = [];
    let result = '';
    const stream = client.experimental.tasks.callToolStream(
      { name: 'simulate-research-query', arguments: { topic: 'the water cycle', ambiguous: false } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    );
    for await (const m of stream) {
      if (m.type === 'taskCreated') statuses.push('created');
      if (m.type === 'taskStatus' && statuses.at(-1) !== m.task.status) statuses.push(m.task.status);
      if (m.type === 'result') result = text(m.result);
      if (m.type === 'error') result = `error: ${m.error.message}`;
    }
    return { asked, errorCode, retried, statuses, result };
  } finally {
    await client.close();
  }
}

let recorded: Run;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-2025-11-25-'));
  server = await startEverything('streamableHttp');
  const rec = await startProxy({
    mode: 'record',
    tape: 'spec',
    dir,
    port: 0,
    routes: [{ prefix: '/ev/mcp', upstream: `${server.url}/mcp` }],
    log,
  });
  try {
    recorded = await agent(`${rec.url}/ev/mcp`, { action: 'accept' });
  } finally {
    await rec.close();
    await server.stop();
  }
}, 120_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function replayed(saveAs: string, answer: ElicitResult): Promise<Run> {
  const rep = await startProxy({ mode: 'replay', tape: 'spec', dir, port: 0, routes: [], saveAs, responders: [createMcpResponder()], log });
  try {
    return await agent(`${rep.url}/ev/mcp`, answer);
  } finally {
    await rep.close();
  }
}

describe('the 2025-11-25 additions, recorded and replayed', () => {
  it('records URL-mode elicitation (both paths) and a task polled to its result', () => {
    expect(recorded.asked).toMatch(/User completed the URL elicitation flow/);
    expect(recorded.errorCode).toBe(-32042);
    expect(recorded.retried).toMatch(/User completed the URL elicitation flow/);
    expect(recorded.statuses[0]).toBe('created');
    expect(recorded.statuses).toContain('completed');
    expect(recorded.result).not.toBe('');
  });

  it('replays them with the server gone: the same answers, the -32042 error then the retry, the task to its result', async () => {
    const again = await replayed('spec-replay', { action: 'accept' });
    expect(again).toEqual(recorded);
    const tape = await loadTape(dir, 'spec-replay');
    expect(tape.exchanges.filter((ex) => ex.match?.kind === 'miss').map((ex) => ex.match?.reason)).toEqual([]);
  });

  it('a URL elicitation the user now declines is a miss, like any server request answered differently', async () => {
    const again = await replayed('spec-declined', { action: 'decline' });
    expect(again.asked).toMatch(/^threw: .*elicitation\/create differently from the recording/);
    expect(again.asked).toContain('result.action: "accept" vs "decline"');
  });
});
