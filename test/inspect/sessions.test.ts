/**
 * A WebSocket session as an inspector sees it: each response of a Realtime or Live session is an LLM step (model,
 * tool calls with arguments, text, usage), so show, the timeline, debrief, diff (tool sequence), cost and the
 * viewer read it like any LLM call; the session itself stays one step with its messages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { toHar } from '../../src/export/har.js';
import { tapeSpans } from '../../src/export/otlp.js';
import { toSteps } from '../../src/inspect/steps.js';
import { toolSequence } from '../../src/inspect/diff/tool-sequence.js';
import { diffTapes } from '../../src/inspect/diff/diff.js';
import { createLogger } from '../../src/log.js';
import { conversationOf } from '../../src/providers/describe.js';
import { startProxy } from '../../src/front/server.js';
import { readTape } from '../../src/tape/tape-reader.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { weatherAgent } from '../helpers/realtime-agent.js';
import { geminiLiveScript, realtimeScript, startWsUpstream } from '../helpers/ws-upstream.js';

const log = createLogger('silent');
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ws-inspect-'));
  const openai = await startWsUpstream(realtimeScript());
  const gemini = await startWsUpstream(geminiLiveScript());
  const rec = await startProxy({
    mode: 'record',
    tape: 'rt',
    dir,
    port: 0,
    log,
    routes: [
      { prefix: '/openai', upstream: openai.url },
      { prefix: '/gemini', upstream: gemini.url },
    ],
  });
  const base = rec.url.replace('http', 'ws');
  await weatherAgent(`${base}/openai/v1/realtime?model=gpt-realtime`);
  await liveAgent(`${base}/gemini/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k`);
  await rec.close();
  const rep = await startProxy({ mode: 'replay', tape: 'rt', dir, port: 0, log, routes: [], saveAs: 'rt-replay' });
  const again = rep.url.replace('http', 'ws');
  await weatherAgent(`${again}/openai/v1/realtime?model=gpt-realtime`);
  await liveAgent(`${again}/gemini/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k`);
  await rep.close();
  await openai.close();
  await gemini.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A Gemini Live client on plain `ws`: setup, a question, the tool response, the answer; JSON in binary messages. */
async function liveAgent(url: string): Promise<void> {
  const ws = new WebSocket(url);
  const send = (m: unknown): void => ws.send(JSON.stringify(m));
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('open', () =>
      send({
        setup: {
          model: 'models/gemini-live-2.5-flash',
          systemInstruction: { parts: [{ text: 'Be brief.' }] },
          tools: [{ functionDeclarations: [{ name: 'get_weather' }] }],
        },
      }),
    );
    ws.on('message', (d: Buffer) => {
      const m = JSON.parse(d.toString()) as Record<string, { functionCalls?: { id: string; name: string }[]; turnComplete?: boolean }>;
      if (m.setupComplete)
        send({ clientContent: { turns: [{ role: 'user', parts: [{ text: 'What is the weather?' }] }], turnComplete: true } });
      const call = m.toolCall?.functionCalls?.[0];
      if (call) send({ toolResponse: { functionResponses: [{ id: call.id, name: call.name, response: { sky: 'sunny' } }] } });
      if (m.serverContent?.turnComplete) {
        ws.close();
        resolve();
      }
    });
  });
  await new Promise((r) => ws.once('close', r));
}

describe('Realtime and Live sessions as steps', () => {
  it('reads each response as an LLM call: model, tool calls, text, usage, and the conversation the model saw', async () => {
    const tape = await readTape(path.join(dir, 'rt.jsonl'));
    const steps = toSteps(tape.exchanges);
    expect(steps.map((s) => [s.kind, s.target])).toEqual([
      ['WS', '/v1/realtime'],
      ['LLM', 'gpt-realtime'],
      ['LLM', 'gpt-realtime'],
      ['WS', '/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent'],
      ['LLM', 'gemini-live-2.5-flash'],
      ['LLM', 'gemini-live-2.5-flash'],
    ]);
    const [session, call, answer, , liveCall, liveAnswer] = steps;
    expect(session?.result).toMatch(/^\d+ messages$/);
    expect(call?.exchange.id).toBe(`${session?.exchange.id}.1`);
    expect(call?.exchange.llm).toMatchObject({
      provider: 'openai',
      api: 'realtime',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
      usage: { inputTokens: 40, outputTokens: 12, totalTokens: 52 },
      stopReason: 'completed',
      params: { tools: ['get_weather'] },
    });
    expect(call?.args).toBe('What is the weather?');
    expect(answer?.result).toBe('It is sunny in Paris.');
    expect(answer?.tokens).toEqual({ input: 60, output: 9, total: 69 });
    expect(conversationOf(answer!.exchange).map((m) => [m.role, m.text, m.toolCalls?.[0]?.name])).toEqual([
      ['system', 'Be brief.', undefined],
      ['user', 'What is the weather?', undefined],
      ['assistant', '', 'get_weather'],
      ['tool', '{"sky":"sunny"}', undefined],
    ]);
    expect(liveCall?.exchange.llm).toMatchObject({
      provider: 'gemini',
      api: 'live',
      toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
    });
    expect(liveAnswer?.exchange.llm).toMatchObject({
      outputText: 'It is sunny in Paris.',
      usage: { inputTokens: 21, outputTokens: 7, totalTokens: 28 },
    });
    expect(conversationOf(liveAnswer!.exchange).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(toolSequence(steps.map((s) => s.exchange)).map((t) => t.toolName)).toEqual(['get_weather', 'get_weather']);
  });

  it('diff compares a session with its replay response by response: identical', async () => {
    const a = await readTape(path.join(dir, 'rt.jsonl'));
    const b = await readTape(path.join(dir, 'rt-replay.jsonl'));
    const d = diffTapes(a, b);
    expect(d.toolSequenceDiff).toEqual([]);
    expect(d.identical).toBe(true);
    expect(d.unusedRecordings).toBe(0);
  });

  it('show, show --debrief and cost through the CLI', async () => {
    const show = await runCliInProcess(['show', 'rt', '--dir', dir, '--wide']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/LLM\s+\/openai gpt-realtime/);
    // The session itself is a WebSocket session (its 101 is the upgrade), not an HTTP call.
    expect(show.stdout).toMatch(/^ +0 +\+\S+ WS +\/openai +\/v1\/realtime .* 101\b/m);
    expect(show.stdout).not.toMatch(/HTTP .*\b101\b/);
    expect(show.stdout).toContain('It is sunny in Paris.');
    expect(show.stdout).toContain('get_weather');
    const debrief = await runCliInProcess(['show', 'rt', '--dir', dir, '--debrief']);
    expect(debrief.code, debrief.stderr).toBe(0);
    expect(debrief.stdout).toContain('get_weather');
    const cost = await runCliInProcess(['cost', 'rt', '--dir', dir]);
    expect(cost.code, cost.stderr).toBe(0);
    expect(cost.stdout).toMatch(/gpt-realtime/);
    expect(cost.stdout).toMatch(/gemini-live-2\.5-flash/);
  });

  it('exports: the session as one HAR entry with _webSocketMessages; an OTLP span per response under the session span', async () => {
    const tape = await readTape(path.join(dir, 'rt.jsonl'));
    const har = toHar(tape);
    const require = createRequire(import.meta.url);
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json') as object);
    for (const s of Object.values(require('har-schema') as Record<string, object>)) ajv.addSchema(s);
    expect(ajv.getSchema('har.json#')!(har), JSON.stringify(ajv.errors)).toBe(true);
    expect(har.log.entries).toHaveLength(2);
    const [rt, live] = har.log.entries;
    expect(rt?.request.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime\?model=gpt-realtime$/);
    expect(rt?.response.status).toBe(101);
    expect(rt?._resourceType).toBe('websocket');
    const session = tape.exchanges[0]!;
    const messages = session.websocket!.frames.filter((f) => f.kind !== 'close');
    expect(rt?._webSocketMessages).toHaveLength(messages.length);
    expect(rt?._webSocketMessages?.[0]).toMatchObject({ type: 'receive', opcode: 1 });
    expect(JSON.parse(rt!._webSocketMessages![0]!.data)).toMatchObject({ type: 'session.created' });
    expect(rt?._webSocketMessages?.find((m) => m.type === 'send')?.data).toContain('session.update');
    // Gemini's JSON came as binary messages: opcode 2, the bytes in base64.
    expect(live?._webSocketMessages?.find((m) => m.type === 'receive')).toMatchObject({ opcode: 2 });

    const spans = tapeSpans(tape);
    const sessionSpan = spans.find((s) => s.attributes['tapedeck.exchange.id'] === session.id);
    expect(sessionSpan).toBeDefined();
    const responses = spans.filter((s) => s.attributes['gen_ai.request.model'] === 'gpt-realtime');
    expect(responses).toHaveLength(2);
    for (const r of responses) expect(r.parentSpanContext?.spanId).toBe(sessionSpan?.spanContext().spanId);
    expect(responses.map((r) => r.attributes['gen_ai.usage.input_tokens'])).toEqual([40, 60]);
  });
});
