/**
 * A server request in the middle of a call is a contract on replay: the client's answer to a recorded
 * `elicitation/create` must be the one it gave while recording, or the recorded result is not served.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { createMcpResponder } from '../../../src/transports/mcp/responder.js';
import { startProxy } from '../../../src/front/server.js';
import type { OnMiss } from '../../../src/replay/modes.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import { startSdkMcpServer, type SdkMcpServer } from '../../helpers/sdk-mcp-server.js';

const log = createLogger('silent');
let dir: string;
let server: SdkMcpServer;
const ACCEPT: ElicitResult = { action: 'accept', content: { confirm: true } };

/** Call `book` as a client whose user answers the confirmation with `answer`. */
async function book(url: string, answer: ElicitResult): Promise<{ text: string; isError: boolean; asked: string[] }> {
  const client = new Client({ name: 'booker', version: '1' }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message);
    return answer;
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const result = (await client.callTool({ name: 'book', arguments: { place: 'Lisbon' } })) as {
      content: { text: string }[];
      isError?: boolean;
    };
    return { text: result.content[0]?.text ?? '', isError: result.isError === true, asked };
  } catch (err) {
    return { text: `threw: ${(err as Error).message}`, isError: true, asked };
  } finally {
    await client.close();
  }
}

async function replay(saveAs: string, onMiss: OnMiss, answer: ElicitResult, live?: { upstream: string; safe: boolean }) {
  const rep = await startProxy({
    mode: 'replay',
    tape: 'booking',
    dir,
    port: 0,
    routes: live ? [{ prefix: '/deployed/mcp', upstream: live.upstream }] : [],
    saveAs,
    onMiss,
    responders: [createMcpResponder(live ? { sideEffects: { tools: { book: live.safe }, http: [], done: true } } : {})],
    log,
  });
  try {
    const got = await book(`${rep.url}/deployed/mcp`, answer);
    return got;
  } finally {
    await rep.close();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-elicit-'));
  server = await startSdkMcpServer();
  const rec = await startProxy({
    mode: 'record',
    tape: 'booking',
    dir,
    port: 0,
    routes: [{ prefix: '/deployed/mcp', upstream: server.url }],
    log,
  });
  const recorded = await book(`${rec.url}/deployed/mcp`, ACCEPT);
  await rec.close();
  expect(recorded).toEqual({ text: 'booked Lisbon', isError: false, asked: ['Book Lisbon?'] });
  await server.stop();
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the client answers a recorded elicitation/create on replay', () => {
  it('the same answer: the recorded result, and no miss on the replay tape', async () => {
    expect(await replay('same', 'strict', ACCEPT)).toEqual({ text: 'booked Lisbon', isError: false, asked: ['Book Lisbon?'] });
    const tape = await loadTape(dir, 'same');
    expect(tape.exchanges.filter((ex) => ex.match?.kind === 'miss')).toEqual([]);
    expect(tape.exchanges.find((ex) => ex.mcp?.toolName === 'book')?.mcp?.result).toMatchObject({ content: [{ text: 'booked Lisbon' }] });
  });

  it('strict, the user declines what the recording accepted: the call fails naming what differed, a miss on the replay tape', async () => {
    const got = await replay('declined', 'strict', { action: 'decline' });
    expect(got.asked).toEqual(['Book Lisbon?']);
    expect(got.text).toMatch(/^threw: .*elicitation\/create differently from the recording/);
    expect(got.text).toContain('result.action: "accept" vs "decline"');
    expect(got.text).not.toContain('booked Lisbon');
    const tape = await loadTape(dir, 'declined');
    const call = tape.exchanges.find((ex) => ex.mcp?.toolName === 'book');
    expect(call?.match).toMatchObject({ kind: 'miss', stage: 'mcp-server-request', reason: expect.stringContaining('"decline"') });
    expect(call?.mcp?.result).toBeUndefined();
  });

  it('lenient: the tool call gets an isError result saying so, never the recorded one', async () => {
    const got = await replay('declined-lenient', 'lenient', { action: 'accept', content: { confirm: false } });
    expect(got.isError).toBe(true);
    expect(got.text).toContain('result.content.confirm: true vs false');
    const tape = await loadTape(dir, 'declined-lenient');
    expect(tape.exchanges.find((ex) => ex.mcp?.toolName === 'book')?.match?.kind).toBe('miss');
  });

  it('live: a call the reviewed file marks safe goes to the real server, which asks again; the client answers it there', async () => {
    const real = await startSdkMcpServer();
    try {
      const got = await replay('declined-live', 'live', { action: 'decline' }, { upstream: real.url, safe: true });
      // Asked twice: the recorded question, then the real server's own.
      expect(got).toEqual({ text: 'not booked (decline)', isError: false, asked: ['Book Lisbon?', 'Book Lisbon?'] });
      const tape = await loadTape(dir, 'declined-live');
      const call = tape.exchanges.find((ex) => ex.mcp?.toolName === 'book');
      expect(call?.match).toMatchObject({ kind: 'live', reason: expect.stringContaining('differently from the recording') });
      // The client's reply to the real server's question went to the real server.
      expect(tape.exchanges.filter((ex) => ex.mcp?.method === 'tapedeck/response').map((ex) => ex.match?.kind)).toEqual(['exact', 'live']);
      const unsafe = await replay('declined-unsafe', 'live', { action: 'decline' }, { upstream: real.url, safe: false });
      expect(unsafe.text).toMatch(/^threw: .*not forwarded live: the side-effects file marks "book" as a side effect/);
    } finally {
      await real.stop();
    }
  });
});
