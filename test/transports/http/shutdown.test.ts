import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../../src/front/server.js';
import { readTape } from '../../../src/tape/tape-reader.js';
import { spawnCli, waitForListening } from '../../helpers/cli.js';
import { openaiChatStream, startScriptedUpstream } from '../../helpers/scripted-upstream.js';

/** An upstream that reads each request and never answers; it reports when a request arrives and when its client (tapedeck) gives up. */
let hung: Server;
let hungUrl: string;
const arrived: IncomingMessage[] = [];
const closed: IncomingMessage[] = [];
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-stop-'));
  hung = createServer((req) => {
    req.resume();
    arrived.push(req);
    req.socket.once('close', () => closed.push(req));
  });
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  hungUrl = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
});
afterAll(async () => {
  hung.closeAllConnections();
  await new Promise((r) => hung.close(r));
  rmSync(dir, { recursive: true, force: true });
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const chat = (url: string, signal?: AbortSignal): Promise<Response> =>
  fetch(`${url}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello?' }] }),
    ...(signal ? { signal } : {}),
  });

describe('shutdown and upstream timeouts', () => {
  it('SIGTERM with an upstream that never answers: exit 0 within the bound, the pending exchange on the tape with its error', async () => {
    const child = spawnCli(['record', '--tape', 'hung', '--dir', dir, '--port', '0', '--route', `/openai=${hungUrl}`]);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = await waitForListening(child);
    const pending = chat(url).then(
      (r) => r.status,
      () => 'reset',
    );
    const before = arrived.length;
    await until(() => arrived.length > before, 'the request to reach the upstream');
    child.kill('SIGTERM');
    // The upstream never answers: a stop that waited for it would never end (the test's own timeout is the bound).
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, stderr).toBe(0);
    // The client is not left hanging: its connection ends with the proxy (an answer may not make it out first).
    expect([502, 'reset']).toContain(await pending);
    await until(() => closed.length > before, 'the upstream request to be cancelled');
    const tape = await readTape(path.join(dir, 'hung.jsonl'));
    expect(tape.exchanges).toHaveLength(1);
    expect(tape.exchanges[0]?.error).toMatchObject({ code: 'SHUTDOWN', phase: 'response' });
  });

  it('a client that goes away cancels its upstream request, and the exchange says so', async () => {
    const proxy = await startProxy({ mode: 'record', tape: 'gone', dir, port: 0, routes: [{ prefix: '/openai', upstream: hungUrl }] });
    try {
      const abort = new AbortController();
      const before = arrived.length;
      const pending = chat(proxy.url, abort.signal).catch(() => 'aborted');
      await until(() => arrived.length > before, 'the request to reach the upstream');
      abort.abort();
      expect(await pending).toBe('aborted');
      await until(() => closed.length > before, 'the upstream request to be cancelled');
      await until(() => proxy.writer.count === 1, 'the exchange to be written');
    } finally {
      await proxy.close();
    }
    const tape = await readTape(path.join(dir, 'gone.jsonl'));
    expect(tape.exchanges[0]?.error).toMatchObject({ code: 'CLIENT_CLOSED', phase: 'response' });
  });

  it('an upstream that sends no response head within the response timeout gets a 502 and an error on the tape', async () => {
    const proxy = await startProxy({
      mode: 'record',
      tape: 'slow',
      dir,
      port: 0,
      routes: [{ prefix: '/openai', upstream: hungUrl }],
      timeouts: { responseMs: 300 },
    });
    try {
      // The upstream never answers: only the response timeout can end this request.
      const res = await chat(proxy.url);
      expect(res.status).toBe(502);
      expect(await res.text()).toContain('UND_ERR_HEADERS_TIMEOUT');
    } finally {
      await proxy.close();
    }
    const tape = await readTape(path.join(dir, 'slow.jsonl'));
    expect(tape.exchanges[0]?.error).toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT', phase: 'connect' });
  });

  it('a stream that goes quiet for the idle timeout is cut, and the tape keeps what arrived with the error', async () => {
    let release: () => void = () => undefined;
    const quiet = await startScriptedUpstream(() =>
      openaiChatStream({ parts: ['a', 'b'], gate: { after: 2, until: new Promise<void>((r) => (release = r)) } }),
    );
    const proxy = await startProxy({
      mode: 'record',
      tape: 'quiet',
      dir,
      port: 0,
      routes: [{ prefix: '/openai', upstream: quiet.url }],
      timeouts: { idleMs: 300 },
    });
    try {
      const res = await chat(proxy.url);
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow(); // cut, not ended cleanly
    } finally {
      await proxy.close();
      release();
      await quiet.close();
    }
    const tape = await readTape(path.join(dir, 'quiet.jsonl'));
    expect(tape.exchanges[0]?.error).toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT', phase: 'stream' });
    expect(tape.exchanges[0]?.response?.events?.length).toBe(2);
  });
});
