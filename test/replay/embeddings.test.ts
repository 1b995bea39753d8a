/**
 * Optional embedding similarity against a local OpenAI-compatible `/v1/embeddings` server: it judges rewordings the
 * word method cannot, each text is embedded once, and the precision guard still runs first.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingRequest } from '../../src/replay/matcher.js';
import { createReplayMatcher } from '../../src/replay/pipeline.js';
import { exchange } from '../inspect/exchanges.js';
import { embeddingSimilarity } from '../../src/inspect/diff/embedding-similarity.js';

let server: Server;
let url: string;
const inputs: string[][] = [];
const SYNONYMS: Record<string, string> = { ocean: 'sea', automobile: 'car' };

/** A toy embedding model: words (synonyms folded) hashed into 64 dimensions. */
function embed(text: string): number[] {
  const v = new Array<number>(64).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const w = SYNONYMS[raw] ?? raw;
    let h = 0;
    for (const c of w) h = (h * 31 + c.charCodeAt(0)) % 64;
    v[h] = (v[h] ?? 0) + 1;
  }
  return v;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const { input, model } = JSON.parse(body) as { input: string[]; model: string };
      inputs.push(input);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ object: 'list', model, data: input.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) })) }),
        );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const body = (text: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content: text }] });
const recorded = (text: string) => exchange({ offsetMs: 0, body: body(text), response: { text } });
const incoming = (text: string): IncomingRequest => ({
  route: '/openai',
  request: { method: 'POST', path: '/v1/chat/completions', query: [], body: { kind: 'json', json: body(text) } },
});

describe('embedding similarity', () => {
  it('serves a synonym the word method refuses, and embeds each text once', async () => {
    const tape = [recorded('Write a haiku about the sea'), recorded('Write a haiku about the mountains')];
    const words = createReplayMatcher(tape);
    expect((await words.match(incoming('Write a haiku about the ocean'))).kind).toBe('miss');

    const matcher = createReplayMatcher(tape, { semantic: { embeddings: { url, model: 'toy', threshold: 0.95 } } });
    const hit = await matcher.match(incoming('Write a haiku about the ocean'));
    expect(hit.kind).toBe('semantic');
    if (hit.kind !== 'semantic') return;
    expect(hit.stage).toBe('similarity+embeddings');
    expect(hit.exchange.id).toBe(tape[0]!.id);
    expect(hit.explanation).toContain('embedding cosine 1.000');
    const calls = inputs.length;
    await matcher.match(incoming('Write a haiku about the ocean'));
    expect(inputs.length).toBe(calls); // every text already embedded
  });

  it('still refuses a different number before asking the model', async () => {
    const matcher = createReplayMatcher([recorded('Book a table for 4 people')], { semantic: { embeddings: { url, model: 'toy' } } });
    const calls = inputs.length;
    const out = await matcher.match(incoming('Book a table for 5 people'));
    expect(out.kind).toBe('miss');
    expect(out.explanation).toContain('number differs');
    expect(inputs.length).toBe(calls);
  });

  it('falls back to the word method, saying so, when the endpoint is down', async () => {
    const matcher = createReplayMatcher([recorded('Please summarise the meeting notes for the whole team')], {
      semantic: { embeddings: { url: 'http://127.0.0.1:9/v1', model: 'toy' } },
    });
    const out = await matcher.match(incoming('Please summarize the meeting notes for the whole team'));
    expect(out.kind).toBe('semantic');
    const miss = await matcher.match(incoming('Please summarize the meeting minutes for the whole team'));
    expect(miss.kind).toBe('miss');
    expect(miss.explanation).toMatch(/embeddings endpoint \S+ unreachable: .*; used the built-in word similarity/);
  });

  it('on the fallback, the built-in method still refuses a replaced word that a long text would score above the threshold', async () => {
    const long = 'Please write a detailed summary of the attached report for the executive team meeting on product strategy and roadmap';
    const matcher = createReplayMatcher([recorded(long)], { semantic: { embeddings: { url: 'http://127.0.0.1:9/v1', model: 'toy' } } });
    const miss = await matcher.match(incoming(long.replace('executive', 'sales')));
    expect(miss.kind).toBe('miss');
    expect(miss.explanation).toContain('used the built-in word similarity');
    expect(miss.explanation).toContain('word differs: "executive" vs "sales"');
  });
});

describe('diff output similarity through the same endpoint', () => {
  it('scores a rewording by cosine, says the method, and asks the endpoint once for all texts', async () => {
    const before = inputs.length;
    const sim = await embeddingSimilarity(
      [
        ['I drove the automobile to the ocean', 'I drove the car to the sea'],
        ['same', 'same'],
        ['', 'not empty'],
      ],
      { url, model: 'toy' },
    );
    expect(sim.method).toBe('embeddings');
    expect(sim.of('I drove the automobile to the ocean', 'I drove the car to the sea')).toBe(1);
    expect(sim.of('same', 'same')).toBe(1);
    expect(sim.of('', 'not empty')).toBe(0);
    expect(inputs.length - before).toBe(1);
    await expect(embeddingSimilarity([['a', 'b']], { url: 'http://127.0.0.1:9/v1', model: 'toy' })).rejects.toMatchObject({
      code: 'EMBEDDINGS_FAILED',
    });
  });
});
