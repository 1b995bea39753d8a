/**
 * Faults on a real recorded run, driven by the official SDKs with their default retries: the issue's own example (the
 * second OpenAI call rate-limited once; the SDK retries; the run ends with the recorded answers), the providers' own
 * error shapes, and a stream cut after N events or delayed, each on the replay tape as injected.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../../../src/engine/faults/fault-plan.js';
import { parseFaultRule, type FaultRule } from '../../../src/engine/faults/fault-rules.js';
import { createLogger } from '../../../src/log.js';
import { startProxy } from '../../../src/front/server.js';
import { createDirStore } from '../../../src/tape/stores/dir-store.js';
import {
  anthropicMessage,
  lastUserText,
  openaiChat,
  openaiChatStream,
  startScriptedUpstream,
  type ScriptedUpstream,
} from '../../helpers/scripted-upstream.js';

const log = createLogger('silent');
let dir: string;
let upstream: ScriptedUpstream;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-faults-'));
  upstream = await startScriptedUpstream((req) => {
    if (req.url.startsWith('/v1/messages')) return anthropicMessage({ text: 'Bom dia.' });
    const body = req.body as { stream?: boolean };
    const text = lastUserText(req.body);
    if (body.stream === true) return openaiChatStream({ parts: ['one', ' two', ' three', ' four'], usage: [5, 4] });
    return openaiChat({ content: `answer to ${text}` });
  });
  // The recorded run: three chat completions, a streamed one, and an Anthropic message.
  const rec = await startProxy({
    mode: 'record',
    tape: 'run',
    dir,
    port: 0,
    log,
    routes: [
      { prefix: '/openai', upstream: upstream.url },
      { prefix: '/anthropic', upstream: upstream.url },
    ],
  });
  const openai = new OpenAI({ baseURL: `${rec.url}/openai/v1`, apiKey: 'sk-test-faults' });
  for (const q of ['first', 'second', 'third'])
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] });
  const stream = await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'stream' }],
    stream: true,
  });
  for await (const _ of stream);
  await new Anthropic({ baseURL: `${rec.url}/anthropic`, apiKey: 'sk-ant-test' }).messages.create({
    model: 'claude-sonnet-4-6',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'hi' }],
  });
  await rec.close();
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

async function replayWith(rules: FaultRule[], saveAs: string): Promise<{ url: string; close: () => Promise<void> }> {
  const proxy = await startProxy({
    mode: 'replay',
    tape: 'run',
    dir,
    port: 0,
    log,
    routes: [],
    saveAs,
    faults: createFaultPlan(rules, { seed: 1 }),
  });
  return { url: proxy.url, close: () => proxy.close() };
}

describe('faults injected into a recorded run', () => {
  it("the issue's example: the second OpenAI call gets a 429 once, the SDK retries, every answer is the recorded one", async () => {
    const seenBefore = upstream.requests.length;
    const rules = [parseFaultRule('{when: {api: openai, call: 2}, then: {status: 429, retryAfter: 0}}')];
    const proxy = await replayWith(rules, 'run-429');
    // The SDK's defaults: two retries, which honour retry-after.
    const openai = new OpenAI({ baseURL: `${proxy.url}/openai/v1`, apiKey: 'sk-test-faults' });
    const answers: string[] = [];
    for (const q of ['first', 'second', 'third']) {
      const res = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] });
      answers.push(res.choices[0]?.message.content ?? '');
    }
    await proxy.close();
    expect(answers).toEqual(['answer to first', 'answer to second', 'answer to third']);
    expect(upstream.requests.length).toBe(seenBefore);
    const out = await createDirStore(dir).load('run-429');
    expect(out.exchanges.map((ex) => [ex.response?.status, ex.match?.kind])).toEqual([
      [200, 'exact'],
      [429, 'fault'],
      [200, 'exact'],
      [200, 'exact'],
    ]);
    const injected = out.exchanges[1]!;
    expect(injected.notes?.fault).toBe('#1 openai call 2 -> 429');
    expect(injected.response?.headers['retry-after']).toBe('0');
    expect(injected.response?.body).toMatchObject({ json: { error: { type: 'requests', code: 'rate_limit_exceeded' } } });
  });

  it("each provider's own error: Anthropic 529 overloaded_error, which its SDK reads as an overload", async () => {
    const proxy = await replayWith([parseFaultRule('{when: {api: anthropic}, then: {status: 529}}')], 'run-529');
    const anthropic = new Anthropic({ baseURL: `${proxy.url}/anthropic`, apiKey: 'sk-ant-test', maxRetries: 0 });
    const err = await anthropic.messages
      .create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    await proxy.close();
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  });

  it('a stream cut after two events: the client gets two, then the connection breaks; the replay tape says so', async () => {
    const proxy = await replayWith([parseFaultRule('{when: {model: gpt-4o-mini}, then: {cut: {afterEvents: 2}}}')], 'run-cut');
    const res = await fetch(`${proxy.url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream' }], stream: true }),
    });
    const reader = res.body!.getReader();
    let text = '';
    let broke = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString('utf8');
      }
    } catch {
      broke = true;
    }
    await proxy.close();
    expect(broke).toBe(true);
    expect(text.split('\n\n').filter((e) => e.startsWith('data:'))).toHaveLength(2);
    const out = await createDirStore(dir).load('run-cut');
    const cut = out.exchanges[0]!;
    expect(cut.error).toMatchObject({ code: 'FAULT_CUT', phase: 'stream' });
    expect(cut.response?.events).toHaveLength(2);
    expect(cut.match?.kind).toBe('exact');
    expect(cut.notes?.fault).toBe('#1 gpt-4o-mini -> cut after 2 events');
  });

  it('a rule with a probability picks the same calls with the same seed', () => {
    const picks = (seed: number): boolean[] => {
      const plan = createFaultPlan([parseFaultRule('{when: {api: openai, probability: 0.5}, then: {status: 500}}')], { seed });
      return Array.from({ length: 20 }, () => plan.pick({ route: '/openai', provider: 'openai' }) !== undefined);
    };
    expect(picks(7)).toEqual(picks(7));
    expect(picks(7)).not.toEqual(picks(8));
    expect(picks(7).filter(Boolean).length).toBeGreaterThan(2);
  });

  it('a bad rule is one line that says what is wrong, with an example', () => {
    expect(() => parseFaultRule('{when: {api: openai}, then: {retryAfter: 1}}')).toThrow(/bad --fault .*then: says nothing to do/);
    expect(() => parseFaultRule('{when: {apii: openai}, then: {status: 429}}')).toThrow(/when: Unrecognized key.*e\.g\. --fault/);
  });
});
