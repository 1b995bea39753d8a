/**
 * A stream too large to hold in a tape line (here 40 MiB of chat-completion chunks) recorded through the real proxy:
 * past 16 MiB its events go to the tape's store as they come (`response.eventsFile`, tape format 3), redacted like the
 * line, the call described as it streamed (text, usage); the client gets every byte at once. Replay reads the events
 * back from the store as the client takes them, byte for byte; `show`, `diff` and `export` read the tape without holding
 * the stream.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startProxy } from '../../../src/front/server.js';
import { createDirStore } from '../../../src/tape/stores/dir-store.js';
import { STREAMED_BODY_BYTES } from '../../../src/tape/large-body.js';
import type { TapeStore } from '../../../src/tape/store.js';
import { runCliInProcess } from '../../helpers/cli-in-process.js';
import { answerDigest, type AnswerDigest } from '../../helpers/answer-digest.js';

const MiB = 1024 * 1024;
const SIZE = 40 * MiB;
/** A key the upstream repeats in the stream, early (held in memory) and late (after the spill began). */
const SECRET = `sk-proj-${'Zq9'.repeat(12)}`;

/** The stream's events (each one chunk's text), the text of the answer they carry, and the whole stream. */
function theStream(): { events: string[]; answer: string; text: string } {
  const events: string[] = [];
  let answer = '';
  let size = 0;
  for (let i = 0; size < SIZE; i++) {
    const word = i === 10 || i === 200_000 ? `${SECRET} ` : `w${i} `;
    answer += word;
    const chunk = {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta: { content: word } }],
    };
    const event = `data: ${JSON.stringify(chunk)}\n\n`;
    events.push(event);
    size += event.length;
  }
  const usage = {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    model: 'gpt-4o-mini',
    choices: [],
    usage: { prompt_tokens: 7, completion_tokens: events.length, total_tokens: events.length + 7 },
  };
  events.push(`data: ${JSON.stringify(usage)}\n\n`, 'data: [DONE]\n\n');
  return { events, answer, text: events.join('') };
}

const sha = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

/** A store whose blob sinks count the bytes they are fed: what reached the store so far. */
function counting(store: TapeStore): { store: TapeStore; stored: () => number } {
  let bytes = 0;
  const wrapped: TapeStore = Object.create(store) as TapeStore;
  wrapped.blobSink = (name) => {
    const sink = store.blobSink(name);
    return {
      write(chunk) {
        bytes += chunk.byteLength;
        sink.write(chunk);
      },
      end: (encoding) => sink.end(encoding),
      abort: () => sink.abort(),
    };
  };
  return { store: wrapped, stored: () => bytes };
}

/** An upstream that streams `stream` at its client's pace, holding the second half back until `release()`. */
async function startUpstream(stream: { events: string[] }): Promise<{ url: string; release: () => void; close: () => Promise<void> }> {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let i = 0;
      const half = Math.floor(stream.events.length / 2);
      const pump = (): void => {
        while (i < stream.events.length) {
          if (i === half) return void gate.then(() => ((i = half + 0.5), pump()));
          const ok = res.write(stream.events[Math.floor(i++)]);
          if (!ok) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    release: () => release(),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Ask for the stream through `url`; resolves with the status, match header and sha256 of what arrived. */
function ask(url: string): Promise<AnswerDigest> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a long answer' }] });
    const req = request(
      `${url}/openai/v1/chat/completions`,
      { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test-key' } },
      (res) => void answerDigest(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end(body);
  });
}

let dir: string;
const stream = theStream();
/** What replay serves: the stream as the tape holds it, the key redacted. */
const redacted = stream.text.replaceAll(SECRET, '[REDACTED:1]');
let replayName = '';

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-large-stream-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a stream too large for a tape line', () => {
  it('is recorded: its events go to the store as they come, the client gets every byte, the call is described', async () => {
    const { store, stored } = counting(createDirStore(dir));
    const upstream = await startUpstream(stream);
    const routes = [{ prefix: '/openai', upstream: upstream.url }];
    try {
      const rec = await startProxy({ mode: 'record', tape: 'big', store, port: 0, routes });
      try {
        const answered = ask(rec.url);
        // Half the stream has come (more than the limit) and the rest has not: it is in the store, not in memory.
        await vi.waitFor(() => expect(stored()).toBeGreaterThan(STREAMED_BODY_BYTES), { timeout: 30_000, interval: 50 });
        upstream.release();
        expect(await answered).toMatchObject({ status: 200, bytes: Buffer.byteLength(stream.text), sha256: sha(stream.text) });
      } finally {
        await rec.close();
      }
    } finally {
      upstream.release();
      await upstream.close();
      await store.close();
    }
    const lines = readFileSync(path.join(dir, 'big.jsonl'), 'utf8').split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ format: 3 });
    // The exchange's line holds the answer's meaning (its text), not its events: those are in a side file of their
    // own. Neither holds the key.
    expect(lines[1]!.length).toBeLessThan(stream.answer.length + 64 * 1024);
    const ex = JSON.parse(lines[1]!) as {
      response: { events?: unknown; eventsFile: { kind: string; file: string; events: number } };
      llm: { outputText: string; usage: unknown; streamed: boolean };
    };
    expect(ex.response.events).toBeUndefined();
    expect(ex.response.eventsFile).toMatchObject({ kind: 'file', encoding: 'text', events: stream.events.length });
    const side = readFileSync(path.join(dir, ex.response.eventsFile.file), 'utf8');
    expect(side).not.toContain(SECRET);
    expect(side.split('\n').filter((l) => l.includes('[REDACTED:1]'))).toHaveLength(2);
    expect(readdirSync(path.join(dir, 'big.files'))).toEqual([path.basename(ex.response.eventsFile.file)]);
    // Described as it streamed: the answer's text (its key under the line's marker), usage, streamed.
    expect(ex.llm.streamed).toBe(true);
    expect(ex.llm.usage).toEqual({ inputTokens: 7, outputTokens: stream.events.length - 2, totalTokens: stream.events.length + 5 });
    expect(ex.llm.outputText).toBe(stream.answer.replaceAll(SECRET, '[REDACTED:1]'));
    expect(lines[1]).not.toContain(SECRET);
  }, 120_000);

  it('replays from the store byte for byte; the replay tape keeps its own copy', async () => {
    const store = createDirStore(dir);
    const play = await startProxy({ mode: 'replay', tape: 'big', store, port: 0, routes: [], onMiss: 'strict' });
    try {
      expect(await ask(play.url)).toMatchObject({ status: 200, match: 'exact', sha256: sha(redacted) });
    } finally {
      await play.close();
      await store.close();
    }
    replayName = play.writer.name;
    const replay = await createDirStore(dir).load(replayName, { resolveFiles: false });
    expect(replay.header.format).toBe(3);
    expect(replay.exchanges[0]?.response?.eventsFile).toMatchObject({
      file: expect.stringContaining(`${path.basename(replayName)}.files/`) as string,
      events: stream.events.length,
    });
  }, 120_000);

  it('show, diff and export read the tape without holding the stream', async () => {
    const show = await runCliInProcess(['show', 'big', '--dir', dir]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('gpt-4o-mini');
    const diff = await runCliInProcess(['diff', 'big', replayName, '--dir', dir]);
    expect(diff.stderr).toBe('');
    expect(diff.code).toBe(0);
    const out = path.join(dir, 'big.har');
    const exported = await runCliInProcess(['export', 'big', '--format', 'har', '--out', out, '--dir', dir]);
    expect(exported.code, exported.stderr).toBe(0);
    // Too large for a HAR: its size unknown there, and said so.
    const har = JSON.parse(readFileSync(out, 'utf8')) as { log: { entries: { response: { content: Record<string, unknown> } }[] } };
    expect(har.log.entries[0]!.response.content).toEqual({
      size: -1,
      mimeType: 'text/event-stream',
      comment: expect.stringMatching(
        new RegExp(`^${stream.events.length} events stored apart on the tape \\(big\\.files/[0-9a-f]{64}\\.txt\\), not exported$`),
      ) as string,
    });
  }, 120_000);
});
