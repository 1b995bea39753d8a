/**
 * A provider added through the registry alone (the adapter in `parrot-provider.ts`, one `registerProvider` call):
 * recorded with its meaning, replayed exactly and semantically, converted between streamed and not, missed in its
 * own error shape, rewritten by `--llm live` overrides where it keeps them, and read by the inspector.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createReplayMatcher, registerProvider, startProxy, toSteps, conversationOf, loadTape, type Exchange } from '../../src/index.js';
import { spanShape } from '../../src/export/otel-attributes.js';
import { agentEnv } from '../../src/run/agent-env.js';
import { closestRoute } from '../../src/front/closest-route.js';
import { createLlmLiveResponder } from '../../src/transports/http/llm-live.js';
import { buildOverridePlan } from '../../src/replay/override-targets.js';
import { readFileSync } from 'node:fs';
import { parrot } from './parrot-provider.js';

interface ParrotUpstream {
  url: string;
  bodies: Record<string, unknown>[];
  close(): Promise<void>;
}

/** The real Parrot API, on port 0: repeats the last thing the human said, in the requested voice. */
async function startParrot(): Promise<ParrotUpstream> {
  const bodies: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as { voice: string; live?: boolean; history: { who: string; said: string }[] };
      bodies.push(body);
      const heard = body.history.filter((t) => t.who === 'human').at(-1)?.said ?? '';
      const said = `${body.voice}: ${heard}`;
      const cost = { heard: heard.split(' ').length, said: said.split(' ').length };
      const actions = heard.includes('cracker') ? [{ name: 'eat', args: { what: 'cracker' } }] : [];
      if (body.live === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of said.split(/(?<= )/)) res.write(`data: ${JSON.stringify({ piece })}\n\n`);
        res.end(`data: ${JSON.stringify({ done: true, why: 'finished', cost })}\n\n`);
      } else {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ voice: body.voice, said, actions, why: 'finished', cost }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Parrot's API key. */
const FEATHER = 'feather-7f3a9c1e5b';

const ask = (said: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  voice: 'polly',
  persona: 'You repeat what you hear.',
  history: [{ who: 'human', said }],
  settings: { temperature: 0 },
  ...extra,
});

async function speak(base: string, body: Record<string, unknown>): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${base}/parrot/v1/parrot/speak`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-parrot-feather': FEATHER },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('a provider added through the registry alone', () => {
  let dir: string;
  let unregister: () => void;
  const log = createLogger('silent');

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-parrot-'));
    unregister = registerProvider(parrot);
    const upstream = await startParrot();
    const proxy = await startProxy({
      mode: 'record',
      tape: 'parrot',
      dir,
      port: 0,
      routes: [{ prefix: '/parrot', upstream: upstream.url }],
      log,
    });
    expect((await speak(proxy.url, ask('Hello there, bird'))).status).toBe(200);
    expect((await speak(proxy.url, ask('Pieces of eight', { live: true }))).status).toBe(200);
    expect((await speak(proxy.url, ask('Want a cracker', { mood: 'hungry', settings: { temperature: 0, max_words: 3 } }))).status).toBe(
      200,
    );
    await proxy.close();
    await upstream.close();
  });

  afterAll(() => {
    unregister();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records what each call meant, read by the adapter', async () => {
    const tape = await loadTape(dir, 'parrot');
    const [hello, pieces, cracker] = tape.exchanges as [Exchange, Exchange, Exchange];
    expect(hello.llm).toEqual({
      provider: 'parrot',
      api: 'parrot.speak',
      model: 'polly',
      params: { temperature: 0 },
      streamed: false,
      usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
      toolCalls: [],
      outputText: 'polly: Hello there, bird',
      stopReason: 'finished',
    });
    expect(pieces.llm).toMatchObject({
      streamed: true,
      outputText: 'polly: Pieces of eight',
      stopReason: 'finished',
      usage: { totalTokens: 7 },
    });
    expect(pieces.response?.events?.length).toBe(5);
    expect(cracker.llm?.toolCalls).toEqual([{ name: 'eat', arguments: { what: 'cracker' } }]);
    // Its own parameter keys (`paramKeys`) are read beside the ones it keeps in its own place.
    expect(cracker.llm?.params).toEqual({ mood: 'hungry', temperature: 0, max_words: 3 });

    const steps = toSteps(tape.exchanges);
    expect(steps.map((s) => [s.kind, s.target, s.args])).toEqual([
      ['LLM', 'polly', 'Hello there, bird'],
      ['LLM', 'polly', 'Pieces of eight'],
      ['LLM', 'polly', 'Want a cracker'],
    ]);
    expect(conversationOf(hello).map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('is complete through the registry alone: key redacted, wrapper variable, trace names, families, route hint', async () => {
    // Its credential header never reaches the tape, though no word of its name says "key".
    const tape = await loadTape(dir, 'parrot');
    expect(tape.exchanges.map((e) => e.request.headers['x-parrot-feather'])).toEqual(['[REDACTED]', '[REDACTED]', '[REDACTED]']);
    expect(readFileSync(path.join(dir, 'parrot.jsonl'), 'utf8')).not.toContain(FEATHER);
    // `tapedeck record -- CMD` points its SDK at tapedeck.
    expect(agentEnv({ url: 'http://127.0.0.1:8787' }).PARROT_BASE_URL).toBe('http://127.0.0.1:8787/parrot/v1');
    // Trace export names the operation and the provider as the adapter says.
    const span = spanShape(tape.exchanges[0] as Exchange, false);
    expect(span.name).toBe('speak polly');
    expect(span.attributes).toMatchObject({ 'gen_ai.operation.name': 'speak', 'gen_ai.provider.name': 'parrot.ai' });
    // Its parameters under their convention names, as the adapter maps them (`max_words` is `max_tokens`).
    expect(spanShape(tape.exchanges[2] as Exchange, false).attributes).toMatchObject({
      'gen_ai.request.temperature': 0,
      'gen_ai.request.max_tokens': 3,
    });
    // `--llm live --model polly-2` knows polly-2 is Parrot's.
    expect(buildOverridePlan({ model: ['polly-2'] }, { families: {} }).rules).toEqual([
      { field: 'model', value: 'polly-2', provider: 'parrot' },
    ]);
    // A Parrot path sent without its route prefix: the no-route error names the route to Parrot's upstream.
    const routes = [
      { prefix: '/birds', upstream: 'https://squawk.example' },
      { prefix: '/other', upstream: 'http://127.0.0.1:1' },
    ];
    expect(closestRoute('/v1/parrot/speak', 'POST', routes)).toEqual({ prefix: '/birds', path: '/birds/v1/parrot/speak' });
  });

  it('replays with the upstream gone: exact, normalised, converted between shapes, and a miss in its own error shape', async () => {
    const replay = await startProxy({
      mode: 'replay',
      tape: 'parrot',
      dir,
      port: 0,
      routes: [],
      saveAs: 'parrot-replay',
      matcher: (t) => createReplayMatcher(t.exchanges, {}),
      log,
    });
    try {
      const exact = await speak(replay.url, ask('Hello there, bird'));
      expect(exact.headers.get('x-tapedeck-match')).toBe('exact');
      expect(JSON.parse(exact.text)).toMatchObject({ said: 'polly: Hello there, bird' });

      const reworded = await speak(replay.url, ask('hello there bird'));
      expect(reworded.headers.get('x-tapedeck-match')).toBe('semantic');
      expect(reworded.headers.get('x-tapedeck-stage')).toBe('normalised');
      expect(JSON.parse(reworded.text)).toMatchObject({ said: 'polly: Hello there, bird' });

      // Recorded as a stream, asked for as JSON: the adapter assembles the answer.
      const assembled = await speak(replay.url, ask('Pieces of eight'));
      expect(assembled.status).toBe(200);
      expect(JSON.parse(assembled.text)).toMatchObject({ said: 'polly: Pieces of eight', why: 'finished' });

      const miss = await speak(replay.url, ask('Who is a pretty bird'));
      expect(miss.status).toBe(404);
      expect(JSON.parse(miss.text)).toMatchObject({ squawk: { status: 404, kind: 'tapedeck_miss' }, tapedeck: { tape: 'parrot' } });
    } finally {
      await replay.close();
    }
    const served = await loadTape(dir, 'parrot-replay');
    expect(served.exchanges.map((e) => e.match?.kind)).toEqual(['exact', 'semantic', 'semantic', 'miss']);
    expect(served.exchanges[2]?.llm).toMatchObject({ provider: 'parrot', outputText: 'polly: Pieces of eight' });
  });

  it('--llm live writes the overrides where this API keeps them', async () => {
    const upstream = await startParrot();
    const replay = await startProxy({
      mode: 'replay',
      tape: 'parrot',
      dir,
      port: 0,
      routes: [{ prefix: '/parrot', upstream: upstream.url }],
      saveAs: 'parrot-live',
      responders: [createLlmLiveResponder({ model: 'macaw', systemPrompt: 'Shout it back.', maxTokens: 5 })],
      log,
    });
    try {
      const live = await speak(replay.url, ask('Hello there, bird'));
      expect(JSON.parse(live.text)).toMatchObject({ said: 'macaw: Hello there, bird' });
    } finally {
      await replay.close();
      await upstream.close();
    }
    expect(upstream.bodies[0]).toMatchObject({ voice: 'macaw', persona: 'Shout it back.', settings: { temperature: 0, max_words: 5 } });
    const served = await loadTape(dir, 'parrot-live');
    expect(served.exchanges[0]?.match?.kind).toBe('live');
    expect(served.exchanges[0]?.notes).toMatchObject({
      overrides: { voice: { from: 'polly', to: 'macaw' }, persona: { to: 'Shout it back.' }, max_words: { to: 5 } },
    });
  });
});
