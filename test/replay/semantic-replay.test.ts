/**
 * Semantic matching end to end: record through `tapedeck record` with the official SDKs, stop the upstream, then
 * replay requests that differ in form (served, with stage, score and source headers) or in meaning (missed, with
 * the reason), through the real CLI and its config.
 */
import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/tape/tape-reader.js';
import { spawnCli, waitForListening } from '../helpers/cli.js';
import { anthropicStream, lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

let dir: string;
let upstream: ScriptedUpstream;

const SYSTEM = 'You are a support agent for Acme. Current time: 2026-11-22T18:35:31Z.';
const WEATHER = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const openai = (base: string) => new OpenAI({ apiKey: 'sk-test', baseURL: `${base}/openai/v1`, maxRetries: 0 });
const anthropic = (base: string) => new Anthropic({ apiKey: 'sk-ant-test', baseURL: `${base}/anthropic`, maxRetries: 0 });
const ask = (client: OpenAI, question: string, system = SYSTEM) =>
  client.chat.completions
    .create({
      model: 'gpt-4o-mini',
      temperature: 0,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: question },
      ],
    })
    .withResponse();

async function serve(args: string[]): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawnCli([...args, '--dir', dir, '--port', '0']);
  const url = await waitForListening(child);
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-semantic-'));
  upstream = await startScriptedUpstream((req) => {
    if (req.url.includes('/v1/messages')) return anthropicStream({ parts: ['claude: ', lastUserText(req.body)] });
    if (lastUserText(req.body).includes('Oslo'))
      return openaiChat({
        content: null,
        toolCalls: [{ id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
        usage: [20, 7],
      });
    return openaiChat({ content: `answer to: ${lastUserText(req.body)}` });
  });
  const rec = await serve(['record', '--tape', 'support', '--route', `/openai=${upstream.url}`, '--route', `/anthropic=${upstream.url}`]);
  await ask(openai(rec.url), 'Please summarise my last three orders');
  await ask(openai(rec.url), 'How many items are in order 1234?');
  await anthropic(rec.url)
    .messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 256,
      stream: true,
      messages: [{ role: 'user', content: 'Write a short poem about the autumn leaves' }],
    })
    .then(async (s) => {
      for await (const _ of s) void _;
    });
  // One non-streamed OpenAI answer with a tool call, to be asked for streamed in replay.
  await openai(rec.url).chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'What is the weather in Oslo?' }],
    tools: [WEATHER],
  });
  await rec.stop();
  await upstream.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('replay with semantic matching (upstream stopped)', () => {
  it('serves requests that differ only in form, saying which stage matched, how well, and from which recording', async () => {
    const rep = await serve(['replay', '--tape', 'support', '--save-as', 'support-run']);
    try {
      // A new timestamp in the system prompt and different case and spacing: the normalised stage.
      const later = SYSTEM.replace('2026-11-22T18:35:31Z', '2026-11-23T07:00:12Z');
      const normalised = await ask(openai(rep.url), 'please summarise my LAST three orders', later);
      expect(normalised.data.choices[0]?.message.content).toBe('answer to: Please summarise my last three orders');
      expect(normalised.response.headers.get('x-tapedeck-match')).toBe('semantic');
      expect(normalised.response.headers.get('x-tapedeck-stage')).toBe('normalised');
      expect(normalised.response.headers.get('x-tapedeck-source')).toMatch(/^\d+$/);

      // A spelling variant: the similarity stage, with its score.
      const similar = await ask(openai(rep.url), 'Please summarize my last three orders');
      expect(similar.data.choices[0]?.message.content).toBe('answer to: Please summarise my last three orders');
      expect(similar.response.headers.get('x-tapedeck-stage')).toBe('similarity');
      expect(Number(similar.response.headers.get('x-tapedeck-score'))).toBeGreaterThanOrEqual(0.85);

      // Anthropic streaming, one article dropped: served from the recorded stream.
      const stream = anthropic(rep.url).messages.stream({
        model: 'claude-haiku-4-5',
        max_tokens: 256,
        messages: [{ role: 'user', content: 'Write a short poem about autumn leaves' }],
      });
      expect(await stream.finalText()).toBe('claude: Write a short poem about the autumn leaves');
    } finally {
      await rep.stop();
    }
    const run = await readTape(path.join(dir, 'support-run.jsonl'));
    expect(run.exchanges.map((e) => e.match?.stage)).toEqual(['normalised', 'similarity', 'similarity']);
    expect(run.exchanges.every((e) => e.match?.kind === 'semantic' && e.match.source !== undefined)).toBe(true);
  });

  it('serves a streamed request from a non-streamed recording and the reverse, in the shape the SDK asked for', async () => {
    const rep = await serve(['replay', '--tape', 'support', '--save-as', 'support-shape']);
    try {
      // Recorded without streaming; asked for as a stream with usage: chunks the SDK assembles into the same tool call.
      const stream = openai(rep.url).chat.completions.stream({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'What is the weather in Oslo?' }],
        tools: [WEATHER],
        stream_options: { include_usage: true },
      });
      const completion = await stream.finalChatCompletion();
      expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({
        id: 'call_oslo',
        function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
      });
      expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
      expect(completion.usage?.total_tokens).toBe(27);

      // Recorded as an Anthropic stream; asked for without streaming: one assembled message.
      const message = await anthropic(rep.url).messages.create({
        model: 'claude-haiku-4-5',
        max_tokens: 256,
        messages: [{ role: 'user', content: 'Write a short poem about the autumn leaves' }],
      });
      expect(message.content).toEqual([{ type: 'text', text: 'claude: Write a short poem about the autumn leaves' }]);
      expect(message.stop_reason).toBe('end_turn');
    } finally {
      await rep.stop();
    }
    const run = await readTape(path.join(dir, 'support-shape.jsonl'));
    expect(run.exchanges.map((e) => e.match?.stage)).toEqual(['normalised', 'normalised']);
    expect(run.exchanges[0]?.match?.reason).toContain('served in the shape asked for');
    expect(run.exchanges[0]?.response?.events?.at(-1)?.data).toBe('[DONE]');
  });

  it('never serves a request with a different number or modal; the miss and the replay tape say why', async () => {
    const rep = await serve(['replay', '--tape', 'support', '--save-as', 'support-miss']);
    try {
      const err = await ask(openai(rep.url), 'How many items are in order 1235?').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      const message = (err as InstanceType<typeof OpenAI.NotFoundError>).message;
      expect(message).toContain('number differs: "1234" vs "1235"');
      expect(message).toMatch(/Closest: #\d+ score/);
      const modal = await ask(openai(rep.url), 'How many items must be in order 1234?').catch((e: unknown) => e);
      expect((modal as Error).message).toContain('modal differs');
    } finally {
      await rep.stop();
    }
    const run = await readTape(path.join(dir, 'support-miss.jsonl'));
    expect(run.exchanges.map((e) => e.match?.kind)).toEqual(['miss', 'miss']);
    expect(run.exchanges[0]?.match?.reason).toContain('number differs: "1234" vs "1235"');
  });

  it('matches exactly only with --exact-only, and takes thresholds from the config file', async () => {
    const exact = await serve(['replay', '--tape', 'support', '--save-as', 'support-exact', '--exact-only']);
    try {
      const err = await ask(openai(exact.url), 'Please summarize my last three orders').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    } finally {
      await exact.stop();
    }
    const config = path.join(dir, 'strict.yaml');
    writeFileSync(config, 'match:\n  semantic:\n    routes:\n      /openai: 0.99\n');
    const strict = await serve(['replay', '--tape', 'support', '--save-as', 'support-strict', '--config', config]);
    try {
      const err = await ask(openai(strict.url), 'Please summarize my last three orders').catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/scored 0\.\d+, below 0\.99/);
    } finally {
      await strict.stop();
    }
  });
});
