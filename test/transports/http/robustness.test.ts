import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/front/server.js';
import { readTape } from '../../../src/tape/tape-reader.js';
import {
  lastUserText,
  openaiChat,
  openaiChatStream,
  startScriptedUpstream,
  type Reply,
  type ScriptedUpstream,
} from '../../helpers/scripted-upstream.js';

let dir: string;
let upstream: ScriptedUpstream;
let gateOpen: () => void = () => undefined;
let gate: Promise<void> = Promise.resolve();
let counter = 0;

const chat = (baseURL: string): OpenAI => new OpenAI({ apiKey: 'sk-test', baseURL: `${baseURL}/openai/v1`, maxRetries: 0 });
const ask = (client: OpenAI, content: string) =>
  client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-robust-'));
  upstream = await startScriptedUpstream((req): Reply => {
    const text = lastUserText(req.body);
    if (text === 'head first') return openaiChatStream({ parts: ['late'], gate: { after: 0, until: gate } });
    if (text === 'gated') return openaiChatStream({ parts: ['first', ' second', ' third'], gate: { after: 2, until: gate } });
    if (text === 'reset me') return openaiChatStream({ parts: ['par', 'tial', ' never'], resetAfter: 3 });
    if (text === 'count') return openaiChat({ content: `answer ${++counter}` });
    if (text === 'overloaded')
      return { kind: 'json', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };
    if (text === 'bad request')
      return {
        kind: 'json',
        status: 400,
        body: { error: { message: 'bad thing', type: 'invalid_request_error', param: null, code: null } },
      };
    return openaiChat({ content: `echo: ${text}` });
  });
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const routes = (): { prefix: string; upstream: string }[] => [{ prefix: '/openai', upstream: upstream.url }];

describe('record', () => {
  it('opens an SSE stream for the client as soon as the upstream has, before any event', async () => {
    gate = new Promise<void>((resolve) => (gateOpen = resolve));
    const rec = await startProxy({ mode: 'record', tape: 'head-first', dir, port: 0, routes: routes() });
    try {
      // The upstream sends its head, then waits for the gate: the SDK's create() resolves only once the head is through
      // the proxy, so a proxy that held the head until the first event would time this test out.
      const stream = await chat(rec.url).chat.completions.create({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'head first' }],
      });
      gateOpen();
      const received: string[] = [];
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
      expect(received.join('')).toBe('late');
    } finally {
      await rec.close();
    }
  });

  it('forwards each SSE event before the upstream has finished the stream', async () => {
    gate = new Promise<void>((resolve) => (gateOpen = resolve));
    const rec = await startProxy({ mode: 'record', tape: 'gated', dir, port: 0, routes: routes() });
    try {
      // The upstream sends two events, then waits for the gate. If the proxy buffered the stream, the client would
      // never see them and the gate would never open: the test would time out instead of passing.
      const stream = await chat(rec.url).chat.completions.create({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'gated' }],
      });
      const received: string[] = [];
      for await (const chunk of stream) {
        received.push(chunk.choices[0]?.delta.content ?? '');
        if (received.length === 2) {
          expect(upstream.requests.length).toBeGreaterThan(0);
          gateOpen();
        }
      }
      expect(received.join('')).toBe('first second third');
    } finally {
      await rec.close();
    }
    const tape = await readTape(path.join(dir, 'gated.jsonl'));
    const events = tape.exchanges[0]?.response?.events ?? [];
    expect(events.length).toBe(6);
    // Events that arrived after the gate opened have later offsets than the ones before it.
    expect(events[2]!.offsetMs).toBeGreaterThanOrEqual(events[1]!.offsetMs);
  });

  it('passes an upstream reset mid-stream to the client and records it, then replays it the same way', async () => {
    const rec = await startProxy({ mode: 'record', tape: 'reset', dir, port: 0, routes: routes() });
    // Read at the byte level with node:http (a web stream drops queued chunks when it errors): what arrived
    // before the connection was cut, and whether it was cut.
    const collect = (base: string): Promise<{ text: string; error?: string }> =>
      new Promise((resolve) => {
        let text = '';
        const req = httpRequest(
          `${base}/openai/v1/chat/completions`,
          { method: 'POST', headers: { 'content-type': 'application/json' } },
          (res) => {
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('end', () => resolve({ text }));
            res.on('error', (err) => resolve({ text, error: err.message }));
            res.on('aborted', () => resolve({ text, error: 'aborted' }));
          },
        );
        req.on('error', (err) => resolve({ text, error: err.message }));
        req.end(JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'reset me' }] }));
      });
    const live = await collect(rec.url);
    await rec.close();
    expect(live.error).toBeDefined();
    expect(live.text.split('\n\n').filter(Boolean)).toHaveLength(3);
    const tape = await readTape(path.join(dir, 'reset.jsonl'));
    const ex = tape.exchanges[0]!;
    expect(ex.error?.phase).toBe('stream');
    expect(ex.response?.events).toHaveLength(3);

    const rep = await startProxy({ mode: 'replay', tape: 'reset', dir, port: 0, routes: [] });
    const replayed = await collect(rep.url);
    await rep.close();
    expect(replayed.text).toBe(live.text);
    expect(replayed.error).toBeDefined();
  });

  it('replays a stream the client cut while recording as cut at the same point, never as a complete answer', async () => {
    gate = new Promise<void>((resolve) => (gateOpen = resolve));
    const rec = await startProxy({ mode: 'record', tape: 'client-cut', dir, port: 0, routes: routes() });
    const read = async (base: string, stopAfter = Infinity): Promise<{ parts: string[]; error?: string }> => {
      const abort = new AbortController();
      const parts: string[] = [];
      try {
        const stream = await chat(base).chat.completions.create(
          { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'gated' }] },
          { signal: abort.signal },
        );
        for await (const chunk of stream) {
          parts.push(chunk.choices[0]?.delta.content ?? '');
          if (parts.length === stopAfter) abort.abort();
        }
        return { parts };
      } catch (err) {
        return { parts, error: (err as Error).message };
      }
    };
    // The agent stops reading after two chunks (the upstream holds the rest until the gate opens).
    const live = await read(rec.url, 2);
    expect(live.parts).toHaveLength(2);
    gateOpen();
    await rec.close();
    const ex = (await readTape(path.join(dir, 'client-cut.jsonl'))).exchanges[0]!;
    expect(ex.error).toMatchObject({ code: 'CLIENT_CLOSED', phase: 'stream' });
    const recorded = ex.response?.events?.length ?? 0;
    expect(recorded).toBeGreaterThanOrEqual(2);

    // Replayed to a client that reads on: the recorded events, then the connection cut, so the SDK fails as the
    // answer was never finished, instead of taking the first words for the whole answer.
    const rep = await startProxy({ mode: 'replay', tape: 'client-cut', dir, port: 0, routes: [] });
    try {
      const replayed = await read(rep.url);
      expect(replayed.parts.join('')).toBe('first second'.slice(0, replayed.parts.join('').length));
      expect(replayed.parts.length).toBeLessThan(4);
      expect(replayed.error).toBeDefined();
    } finally {
      await rep.close();
    }
  });

  it('records concurrent clients without losing or mixing exchanges', async () => {
    const rec = await startProxy({ mode: 'record', tape: 'parallel', dir, port: 0, routes: routes() });
    const client = chat(rec.url);
    const prompts = Array.from({ length: 40 }, (_, i) => `question ${i}`);
    const answers = await Promise.all(prompts.map((p) => ask(client, p)));
    await rec.close();
    expect(answers.map((a) => a.choices[0]?.message.content)).toEqual(prompts.map((p) => `echo: ${p}`));
    const tape = await readTape(path.join(dir, 'parallel.jsonl'));
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges).toHaveLength(40);
    expect(new Set(tape.exchanges.map((e) => e.id)).size).toBe(40);
    for (const ex of tape.exchanges) {
      const asked = (ex.request.body as { json: { messages: { content: string }[] } }).json.messages[0]!.content;
      const body = ex.response?.body as { kind: string; json: { choices: { message: { content: string } }[] } };
      expect(body.json.choices[0]!.message.content).toBe(`echo: ${asked}`);
    }
  });

  it('passes upstream errors through as they were and records them', async () => {
    const rec = await startProxy({
      mode: 'record',
      tape: 'errors',
      dir,
      port: 0,
      routes: [...routes(), { prefix: '/dead', upstream: 'http://127.0.0.1:9' }],
    });
    const client = chat(rec.url);
    await expect(ask(client, 'bad request')).rejects.toMatchObject({ status: 400, error: { message: 'bad thing' } });
    await expect(ask(client, 'overloaded')).rejects.toMatchObject({ status: 529 });
    const refused = await fetch(`${rec.url}/dead/v1/x`, { method: 'POST', body: '{}' });
    expect(refused.status).toBe(502);
    expect(await refused.text()).toContain('could not reach');
    await rec.close();
    const tape = await readTape(path.join(dir, 'errors.jsonl'));
    expect(tape.exchanges.map((e) => e.response?.status).sort()).toEqual([400, 502, 529]);
    expect(tape.exchanges.find((e) => e.response?.status === 502)?.error?.phase).toBe('connect');
  });
});

describe('replay', () => {
  let tapeName: string;
  beforeAll(async () => {
    tapeName = 'nth';
    counter = 0;
    const rec = await startProxy({ mode: 'record', tape: tapeName, dir, port: 0, routes: routes() });
    const client = chat(rec.url);
    for (let i = 0; i < 3; i++) await ask(client, 'count');
    await ask(client, 'What is the capital of France?');
    await rec.close();
  });

  it('gives the Nth identical request the Nth recorded answer, then repeats the last', async () => {
    const rep = await startProxy({ mode: 'replay', tape: tapeName, dir, port: 0, routes: [] });
    const client = chat(rep.url);
    const got: (string | null | undefined)[] = [];
    for (let i = 0; i < 5; i++) got.push((await ask(client, 'count')).choices[0]?.message.content);
    await rep.close();
    expect(got).toEqual(['answer 1', 'answer 2', 'answer 3', 'answer 3', 'answer 3']);
  });

  it('answers a strict miss with a non-retried provider-shaped error naming the closest recordings', async () => {
    let rep: RunningProxy | undefined;
    try {
      rep = await startProxy({ mode: 'replay', tape: tapeName, dir, port: 0, routes: [], saveAs: 'nth-miss' });
      const res = await fetch(`${rep.url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of Spain?' }] }),
      });
      expect(res.status).toBe(404);
      expect(res.headers.get('x-tapedeck-match')).toBe('miss');
      const body = (await res.json()) as {
        error: { type: string; message: string };
        tapedeck: { tape: string; closest: { id: string; score: number; differences: string[] }[] };
      };
      expect(body.error.type).toBe('tapedeck_miss');
      expect(body.error.message).toContain('tape "nth"');
      expect(body.error.message).toContain('POST /openai/v1/chat/completions');
      expect(body.tapedeck.tape).toBe('nth');
      const best = body.tapedeck.closest[0]!;
      expect(best.differences).toEqual(['body.messages[0].content: "What is the capital of France?" vs "What is the capital of Spain?"']);
      expect(best.score).toBeGreaterThan(0.5);
      // The official SDK surfaces it as a NotFoundError without retrying.
      const sdk = chat(rep.url);
      await expect(ask(sdk, 'something never recorded')).rejects.toMatchObject({ status: 404 });
    } finally {
      await rep?.close();
    }
    const saved = await readTape(path.join(dir, 'nth-miss.jsonl'));
    expect(saved.exchanges.map((e) => e.match?.kind)).toEqual(['miss', 'miss']);
    expect(upstream.requests.filter((r) => lastUserText(r.body).includes('Spain'))).toHaveLength(0);
  });

  it('marks a lenient miss, and forwards and records a live miss', async () => {
    const lenient = await startProxy({ mode: 'replay', tape: tapeName, dir, port: 0, routes: [], onMiss: 'lenient' });
    const res = await fetch(`${lenient.url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }),
    });
    await lenient.close();
    expect(res.status).toBe(404);
    expect(res.headers.get('x-tapedeck-lenient')).toBe('true');
    expect(((await res.json()) as { tapedeck: { lenient: boolean } }).tapedeck.lenient).toBe(true);

    const live = await startProxy({ mode: 'replay', tape: tapeName, dir, port: 0, routes: routes(), onMiss: 'live', saveAs: 'nth-live' });
    const before = upstream.requests.length;
    const answer = await ask(chat(live.url), 'brand new question').withResponse();
    const replayedOld = await ask(chat(live.url), 'What is the capital of France?').withResponse();
    await live.close();
    expect(answer.data.choices[0]?.message.content).toBe('echo: brand new question');
    expect(answer.response.headers.get('x-tapedeck-match')).toBe('live');
    expect(replayedOld.response.headers.get('x-tapedeck-match')).toBe('exact');
    expect(upstream.requests.length).toBe(before + 1);
    const saved = await readTape(path.join(dir, 'nth-live.jsonl'));
    expect(saved.exchanges.map((e) => e.match?.kind).sort()).toEqual(['exact', 'live']);
  });

  it('skips and reports corrupt and torn lines, and still replays the rest', async () => {
    const file = path.join(dir, `${tapeName}.jsonl`);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    // Corrupt the second exchange, and tear a copy of the last line in half as a crash would.
    const corrupted = [lines[0], lines[1], '{"type":"exchange","id":', ...lines.slice(3), lines.at(-1)!.slice(0, 40)];
    writeFileSync(path.join(dir, 'corrupt.jsonl'), corrupted.join('\n'));
    const tape = await readTape(path.join(dir, 'corrupt.jsonl'));
    expect(tape.problems.map((p) => [p.line, p.message.split(';')[0]])).toEqual([
      [3, 'not valid JSON'],
      [lines.length + 1, 'torn last line (the recorder stopped mid-write)'],
    ]);
    expect(tape.exchanges).toHaveLength(lines.length - 2);
    const rep = await startProxy({ mode: 'replay', tape: 'corrupt', dir, port: 0, routes: [] });
    const answer = await ask(chat(rep.url), 'What is the capital of France?');
    await rep.close();
    expect(answer.choices[0]?.message.content).toBe('echo: What is the capital of France?');
  });
});
