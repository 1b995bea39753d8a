import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../../src/front/server.js';
import { readTape } from '../../../src/tape/tape-reader.js';
import {
  anthropicStream,
  lastUserText,
  openaiChat,
  openaiChatStream,
  startScriptedUpstream,
  type ScriptedUpstream,
} from '../../helpers/scripted-upstream.js';

const OPENAI_KEY = 'sk-test-OPENAI-SECRET-0123456789';
const ANTHROPIC_KEY = 'sk-ant-test-ANTHROPIC-SECRET-9876543210';

/** A small agent: the same code runs against record and replay; it returns everything it observed. */
async function runAgent(baseUrl: string): Promise<unknown[]> {
  const openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${baseUrl}/openai/v1`, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: `${baseUrl}/anthropic`, maxRetries: 0 });
  const seen: unknown[] = [];

  const plain = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] });
  seen.push(plain.choices[0]?.message, plain.usage);

  const streamed = await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Count to three' }],
  });
  const parts: string[] = [];
  let usage: unknown;
  for await (const chunk of streamed) {
    parts.push(chunk.choices[0]?.delta.content ?? '');
    if (chunk.usage) usage = chunk.usage;
  }
  seen.push(parts, usage);

  // A streamed tool-call turn and its follow-up.
  const tools: OpenAI.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  ];
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const toolTurn = openai.chat.completions.stream({ model: 'gpt-4o-mini', messages, tools });
  const final = await toolTurn.finalChatCompletion();
  const call = final.choices[0]?.message.tool_calls?.[0];
  seen.push(call);
  if (call?.type !== 'function') throw new Error('expected a function call');
  messages.push(final.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '{"temp_c":21}' });
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages, tools });
  seen.push(answer.choices[0]?.message.content);

  const msg = anthropic.messages.stream({
    model: 'claude-sonnet-4-6',
    max_tokens: 200,
    messages: [{ role: 'user', content: 'Write a haiku' }],
  });
  const texts: string[] = [];
  msg.on('text', (t) => texts.push(t));
  const done = await msg.finalMessage();
  seen.push(texts, done.content, done.usage, done.stop_reason);
  return seen;
}

describe('record then replay with the official SDKs', () => {
  let upstream: ScriptedUpstream;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-rr-'));
    upstream = await startScriptedUpstream((req) => {
      const body = req.body as { stream?: boolean; messages?: { role: string }[] };
      const text = lastUserText(body);
      if (req.url.startsWith('/v1/messages')) return anthropicStream({ parts: ['Autumn ', 'moon', ' rises'], usage: [31, 12] });
      if (text === 'Say hello') return openaiChat({ content: 'Hello there!', usage: [9, 3] });
      if (text === 'How long?') {
        // An upstream that states its length (the helper's upstream is chunked otherwise).
        const reply = openaiChat({ content: 'Exactly this long.', usage: [9, 4] });
        if (reply.kind !== 'json') throw new Error('expected a JSON reply');
        return { ...reply, headers: { 'content-length': String(Buffer.byteLength(JSON.stringify(reply.body, null, 2))) } };
      }
      if (text === 'Count to three') return openaiChatStream({ parts: ['one', ', two', ', three'], usage: [11, 5] });
      if (body.messages?.some((m) => m.role === 'tool')) return openaiChat({ content: 'It is 21°C in Paris.', usage: [40, 8] });
      if (text === 'Weather in Paris?')
        return openaiChatStream({ toolCall: { id: 'call_abc', name: 'get_weather', argumentParts: ['{"ci', 'ty":"Par', 'is"}'] } });
      return { kind: 'json', status: 400, body: { error: { message: `unscripted: ${text}` } } };
    });
  });
  afterAll(async () => {
    await upstream.close();
    if (!process.env.KEEP_TAPES) rmSync(dir, { recursive: true, force: true });
    else console.log('tapes in', dir);
  });

  it('replays identical answers with zero upstream requests, and keeps keys off the tape', async () => {
    const routes = [
      { prefix: '/openai', upstream: upstream.url },
      { prefix: '/anthropic', upstream: upstream.url },
    ];
    const rec = await startProxy({ mode: 'record', tape: 'agent', dir, port: 0, routes });
    const recorded = await runAgent(rec.url);
    await rec.close();
    const upstreamHits = upstream.requests.length;
    expect(upstreamHits).toBe(5);
    // The live call carried the key: redaction happens at write time only.
    expect(upstream.requests[0]?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    const anthropicAuth = upstream.requests[4]?.headers;
    expect(`${anthropicAuth?.['x-api-key']} ${anthropicAuth?.authorization}`).toContain(ANTHROPIC_KEY);

    const tape = await readTape(path.join(dir, 'agent.jsonl'));
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges).toHaveLength(5);
    const streamedEx = tape.exchanges.find(
      (e) => e.response?.events !== undefined && JSON.stringify(e.request.body).includes('Count to three'),
    );
    expect(streamedEx?.response?.events?.length).toBeGreaterThan(3);
    expect(streamedEx?.response?.events?.at(-1)?.data).toBe('[DONE]');

    const rep = await startProxy({ mode: 'replay', tape: 'agent', dir, port: 0, routes: [], saveAs: 'agent-replay' });
    const replayed = await runAgent(rep.url);
    await rep.close();
    expect(replayed).toEqual(recorded);
    expect(upstream.requests.length).toBe(upstreamHits);

    const replayTape = await readTape(path.join(dir, 'agent-replay.jsonl'));
    expect(replayTape.header.mode).toBe('replay');
    expect(replayTape.header.replayOf?.tape).toBe('agent');
    expect(replayTape.exchanges.map((e) => e.match?.kind)).toEqual(['exact', 'exact', 'exact', 'exact', 'exact']);
    expect(replayTape.exchanges.map((e) => e.match?.source).sort()).toEqual(tape.exchanges.map((e) => e.id).sort());

    // No secret on any tape file, on either side (request keys, response cookies).
    for (const f of readdirSync(dir)) {
      const text = readFileSync(path.join(dir, f), 'utf8');
      expect(text).not.toContain('OPENAI-SECRET');
      expect(text).not.toContain('ANTHROPIC-SECRET');
      expect(text).not.toContain('upstream-secret-cookie');
    }
  });

  it('answers with the upstream stopped entirely', async () => {
    const routes = [{ prefix: '/openai', upstream: 'http://127.0.0.1:9' }];
    const rec = await startProxy({ mode: 'record', tape: 'solo', dir, port: 0, routes: [{ prefix: '/openai', upstream: upstream.url }] });
    const openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${rec.url}/openai/v1`, maxRetries: 0 });
    const live = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] });
    await rec.close();
    // Replay points the route at a port nobody listens on: any upstream contact would fail the call.
    const rep = await startProxy({ mode: 'replay', tape: 'solo', dir, port: 0, routes });
    const offline = new OpenAI({ apiKey: 'sk-other', baseURL: `${rep.url}/openai/v1`, maxRetries: 0 });
    const res = await offline.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    await rep.close();
    expect(res.data).toEqual(live);
    expect(res.response.headers.get('x-tapedeck-match')).toBe('exact');
  });

  it('sends a JSON answer with its length, not chunked, in record and in replay', async () => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'How long?' }] });
    const post = async (url: string): Promise<{ length: string | null; chunked: boolean; bytes: number }> => {
      const res = await fetch(`${url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const bytes = (await res.arrayBuffer()).byteLength;
      return { length: res.headers.get('content-length'), chunked: res.headers.get('transfer-encoding') === 'chunked', bytes };
    };
    const rec = await startProxy({
      mode: 'record',
      tape: 'lengths',
      dir,
      port: 0,
      routes: [{ prefix: '/openai', upstream: upstream.url }],
    });
    const live = await post(rec.url);
    await rec.close();
    const rep = await startProxy({ mode: 'replay', tape: 'lengths', dir, port: 0, routes: [] });
    const replayed = await post(rep.url);
    await rep.close();
    for (const r of [live, replayed]) {
      expect(r.chunked).toBe(false);
      expect(r.length).toBe(String(r.bytes));
    }
  });

  it('forwards the query string exactly as the client sent it', async () => {
    const raw = 'b=x%20y&a=1+2&c=~z&d=%7E&e';
    const rec = await startProxy({
      mode: 'record',
      tape: 'query',
      dir,
      port: 0,
      routes: [{ prefix: '/openai', upstream: `${upstream.url}/base?route=1` }],
    });
    await fetch(`${rec.url}/openai/v1/chat/completions?${raw}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Say hello' }] }),
    });
    await rec.close();
    expect(upstream.requests.at(-1)?.url).toBe(`/base/v1/chat/completions?route=1&${raw}`);
  });
});

describe('Gemini keys', () => {
  it('keeps a key= query parameter and x-goog-api-key off the tape, and replays with another key', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-gemini-'));
    const chunk = (text: string, finish?: string): string =>
      `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}), index: 0 }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 }, modelVersion: 'gemini-2.5-flash' })}`;
    const upstream = await startScriptedUpstream(() => ({ kind: 'sse', events: [chunk('Bon'), chunk('jour', 'STOP')] }));
    const ask = (base: string, key: string): Promise<Response> =>
      fetch(`${base}/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=${key}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Say hello in French' }] }] }),
      });
    try {
      const rec = await startProxy({
        mode: 'record',
        tape: 'gemini',
        dir,
        port: 0,
        routes: [{ prefix: '/gemini', upstream: upstream.url }],
      });
      const live = await (await ask(rec.url, 'AIza-GEMINI-SECRET-1')).text();
      await rec.close();
      expect(upstream.requests[0]?.url).toContain('key=AIza-GEMINI-SECRET-1');
      const rep = await startProxy({ mode: 'replay', tape: 'gemini', dir, port: 0, routes: [] });
      const res = await ask(rep.url, 'AIza-OTHER-KEY');
      await rep.close();
      expect(res.headers.get('x-tapedeck-match')).toBe('exact');
      expect(await res.text()).toBe(live);
      for (const f of readdirSync(dir)) expect(readFileSync(path.join(dir, f), 'utf8')).not.toMatch(/AIza-(GEMINI|OTHER)/);
    } finally {
      await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
