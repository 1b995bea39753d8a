/**
 * The streams of the providers that do not frame as OpenAI and Anthropic do, cut by a fault as the SSE ones are: an
 * Ollama NDJSON stream (one JSON object a line), read by the `ollama` npm client and by a raw fetch, and Google's SSE
 * framed with CRLF (`\r\n\r\n` between events), on the `/gemini` route and on Vertex, read by `@google/genai` and by a
 * raw fetch. Each is recorded from a scripted upstream that sends one event a write, a few ms apart (their offsets
 * are kept), replayed instantly and at the recorded pace, then with `cut: {afterEvents: 2}`: the client gets exactly
 * 2 events, then the stream breaks off. The same cut in record, on the live stream, gives the same 2.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GoogleGenAI } from '@google/genai';
import { OAuth2Client } from 'google-auth-library';
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../../src/engine/faults/fault-plan.js';
import { parseFaultRule } from '../../src/engine/faults/fault-rules.js';
import type { ProxyOptions } from '../../src/front/proxy-options.js';
import { startProxy } from '../../src/front/server.js';
import { createLogger } from '../../src/log.js';
import { readTape } from '../../src/tape/tape-reader.js';
import { startLocalServer, type LocalServer } from '../helpers/local-server.js';

const log = createLogger('silent');
const GAP_MS = 30;
const WORDS = ['one', ' two', ' three', ' four', ' five'];
const OLLAMA_LINES = [
  ...WORDS.map((w) => JSON.stringify({ model: 'llama3.2', message: { role: 'assistant', content: w }, done: false })),
  JSON.stringify({
    model: 'llama3.2',
    message: { role: 'assistant', content: '' },
    done: true,
    done_reason: 'stop',
    prompt_eval_count: 3,
    eval_count: 5,
  }),
];
const GEMINI_EVENTS = WORDS.map((w) =>
  JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: w }] } }], modelVersion: 'gemini-2.5-flash' }),
);

let dir: string;
let upstream: LocalServer;
let upstreamUrl: string;
let hits = 0;

/** Writes each piece in a write of its own, GAP_MS apart, then ends. */
function trickle(res: ServerResponse, contentType: string, pieces: string[]): void {
  res.writeHead(200, { 'content-type': contentType });
  let i = 0;
  const next = (): void => {
    if (i === pieces.length) return void res.end();
    res.write(pieces[i++]);
    setTimeout(next, GAP_MS);
  };
  next();
}

function answer(req: IncomingMessage, res: ServerResponse): void {
  hits++;
  const url = req.url ?? '/';
  if (url.endsWith('/api/chat'))
    return trickle(
      res,
      'application/x-ndjson',
      OLLAMA_LINES.map((l) => `${l}\n`),
    );
  // Google ends each event (and each line) with CRLF.
  if (url.includes(':streamGenerateContent'))
    return trickle(
      res,
      'text/event-stream',
      GEMINI_EVENTS.map((e) => `data: ${e}\r\n\r\n`),
    );
  res.writeHead(404).end();
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-stream-cuts-'));
  upstream = await startLocalServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  upstreamUrl = upstream.url;
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What each client reads of its stream before it ends or breaks off. */
interface Read {
  parts: string[];
  broke: boolean;
}

async function readParts(parts: AsyncIterable<string>): Promise<Read> {
  const out: string[] = [];
  try {
    for await (const p of parts) out.push(p);
    return { parts: out, broke: false };
  } catch {
    return { parts: out, broke: true };
  }
}

async function* ollamaStream(base: string): AsyncIterable<string> {
  const ollama = new Ollama({ host: `${base}/ollama` });
  for await (const part of await ollama.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'count' }], stream: true }))
    yield part.message.content;
}

function googleAuth(): OAuth2Client {
  const authClient = new OAuth2Client();
  authClient.setCredentials({ access_token: 'ya29.test-access-token-0123456789', expiry_date: Date.now() + 3600_000 });
  return authClient;
}

async function* geminiStream(base: string, vertex: boolean): AsyncIterable<string> {
  const genai = vertex
    ? new GoogleGenAI({
        vertexai: true,
        project: 'proj-1',
        location: 'us-central1',
        httpOptions: { baseUrl: `${base}/vertex` },
        googleAuthOptions: { authClient: googleAuth() },
      })
    : new GoogleGenAI({ apiKey: 'gemini-key-0123456789', httpOptions: { baseUrl: `${base}/gemini` } });
  for await (const c of await genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'count' })) yield c.text ?? '';
}

/** The raw bytes a client reads from a POST before the stream ends or breaks off. */
async function rawRead(url: string, body: unknown): Promise<{ text: string; broke: boolean }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, broke: false };
      text += Buffer.from(value).toString('utf8');
    }
  } catch {
    return { text, broke: true };
  }
}

const OLLAMA_URL = '/ollama/api/chat';
const GEMINI_URL = '/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse';
const VERTEX_URL =
  '/vertex/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse';

/** Each client's stream, and a raw read of the same call. */
const CLIENTS = {
  ollama: (base: string) => readParts(ollamaStream(base)),
  gemini: (base: string) => readParts(geminiStream(base, false)),
  vertex: (base: string) => readParts(geminiStream(base, true)),
  ollamaRaw: (base: string) => rawRead(`${base}${OLLAMA_URL}`, { model: 'llama3.2', messages: [{ role: 'user', content: 'count' }] }),
  geminiRaw: (base: string) => rawRead(`${base}${GEMINI_URL}`, { contents: [{ role: 'user', parts: [{ text: 'count' }] }] }),
  vertexRaw: (base: string) => rawRead(`${base}${VERTEX_URL}`, { contents: [{ role: 'user', parts: [{ text: 'count' }] }] }),
};

async function run(opts: Partial<ProxyOptions> & Pick<ProxyOptions, 'mode' | 'tape'>) {
  const routes = ['/ollama', '/gemini', '/vertex'].map((prefix) => ({ prefix, upstream: upstreamUrl }));
  const proxy = await startProxy({ dir, port: 0, log, routes, ...opts });
  try {
    return {
      ollama: await CLIENTS.ollama(proxy.url),
      gemini: await CLIENTS.gemini(proxy.url),
      vertex: await CLIENTS.vertex(proxy.url),
      ollamaRaw: await CLIENTS.ollamaRaw(proxy.url),
      geminiRaw: await CLIENTS.geminiRaw(proxy.url),
      vertexRaw: await CLIENTS.vertexRaw(proxy.url),
    };
  } finally {
    await proxy.close();
  }
}

const cutAfter2 = (): ProxyOptions['faults'] => createFaultPlan([parseFaultRule('{then: {cut: {afterEvents: 2}}}')], { seed: 1 });

const WIRE = {
  ollama: OLLAMA_LINES.map((l) => `${l}\n`).join(''),
  gemini: GEMINI_EVENTS.map((e) => `data: ${e}\r\n\r\n`).join(''),
};
const CUT_WIRE = {
  ollama: OLLAMA_LINES.slice(0, 2)
    .map((l) => `${l}\n`)
    .join(''),
  gemini: GEMINI_EVENTS.slice(0, 2)
    .map((e) => `data: ${e}\r\n\r\n`)
    .join(''),
};

/** What a cut after 2 events leaves each client. */
const CUT = {
  ollama: { parts: ['one', ' two'], broke: true },
  gemini: { parts: ['one', ' two'], broke: true },
  vertex: { parts: ['one', ' two'], broke: true },
  ollamaRaw: { text: CUT_WIRE.ollama, broke: true },
  geminiRaw: { text: CUT_WIRE.gemini, broke: true },
  vertexRaw: { text: CUT_WIRE.gemini, broke: true },
};

describe('NDJSON and CRLF-framed SSE streams, cut after N events', () => {
  it('record keeps each line / event with its offset; a cut after 2 gives every client exactly 2, in replay and in record', async () => {
    const recorded = await run({ mode: 'record', tape: 'streams' });
    expect(recorded).toEqual({
      ollama: { parts: [...WORDS, ''], broke: false },
      gemini: { parts: WORDS, broke: false },
      vertex: { parts: WORDS, broke: false },
      ollamaRaw: { text: WIRE.ollama, broke: false },
      geminiRaw: { text: WIRE.gemini, broke: false },
      vertexRaw: { text: WIRE.gemini, broke: false },
    });

    // Each line, each event, an event on the tape with its offset: the upstream's gaps are there.
    const tape = await readTape(path.join(dir, 'streams.jsonl'));
    expect(tape.exchanges.map((e) => [e.llm?.provider, e.llm?.model, e.response?.events?.length])).toEqual([
      ['ollama', 'llama3.2', OLLAMA_LINES.length],
      ['gemini', 'gemini-2.5-flash', WORDS.length],
      ['gemini', 'gemini-2.5-flash', WORDS.length],
      ['ollama', 'llama3.2', OLLAMA_LINES.length],
      ['gemini', 'gemini-2.5-flash', WORDS.length],
      ['gemini', 'gemini-2.5-flash', WORDS.length],
    ]);
    expect(tape.exchanges[0]?.response?.events?.map((e) => e.data)).toEqual(OLLAMA_LINES);
    for (const e of tape.exchanges) {
      const offsets = (e.response?.events ?? []).map((ev) => ev.offsetMs);
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
      // The upstream waited GAP_MS between events (timers may fire a little early, never much).
      expect(offsets[offsets.length - 1]! - offsets[0]!).toBeGreaterThanOrEqual((offsets.length - 1) * (GAP_MS - 5));
    }

    const hitsBefore = hits;
    const replayed = await run({ mode: 'replay', tape: 'streams', saveAs: 'streams-replay' });
    expect(replayed).toEqual(recorded);
    // Paced at the recorded gaps (--timing recorded): the same lines and events.
    expect(await run({ mode: 'replay', tape: 'streams', saveAs: 'streams-paced', timing: { mode: 'recorded' } })).toEqual(recorded);
    expect(hits).toBe(hitsBefore);

    expect(await run({ mode: 'replay', tape: 'streams', saveAs: 'streams-cut', faults: cutAfter2() })).toEqual(CUT);
    expect(hits).toBe(hitsBefore);

    // The same cut on the live streams, in record.
    expect(await run({ mode: 'record', tape: 'streams-live-cut', faults: cutAfter2() })).toEqual(CUT);
  });
});
