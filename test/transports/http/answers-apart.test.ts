/**
 * A replay reads the answers stored apart (a large response body, a stream's events in a side file) when it serves
 * them, not when the tape opens: opening checks only that each is there at its recorded size. Serving reads a body
 * whole (up to 16 MiB, the size a body is held at) and a stream (or a larger body) as it goes out, at the client's
 * pace, its bytes checked as they pass and its end held back until they are: an answer whose side file is not what
 * was recorded is an error, or cut, never served whole. (What this saves, in memory and start time,
 * is in bench/large-stream.mjs.)
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/front/server.js';
import { createLogger } from '../../../src/log.js';
import { createReplayMatcher } from '../../../src/replay/pipeline.js';
import { eventLines } from '../../../src/tape/event-file.js';
import { sseEventText } from '../../../src/tape/framing/sse.js';
import type { Exchange } from '../../../src/tape/schema.js';
import {
  openaiChat,
  openaiChatStream,
  startScriptedUpstream,
  lastUserText,
  type ScriptedUpstream,
} from '../../helpers/scripted-upstream.js';

const BIG = 'A'.repeat(2 * 1024 * 1024);
const sha = (b: string | Buffer): string => createHash('sha256').update(b).digest('hex');

let dir: string;
let upstream: ScriptedUpstream;
/** The recorded stream's bytes, as a client got them. */
let streamText: string;

const ask = (url: string, content: string, stream = false): Promise<Response> =>
  fetch(`${url}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...(stream ? { stream: true } : {}) }),
  });

/** The tape's lines, the stream's events moved to a side file of their own (format 3), as a larger one would be. */
function storeStreamApart(tape: string): void {
  const file = path.join(dir, `${tape}.jsonl`);
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  const at = lines.findIndex((l) => l.includes('"events":'));
  const ex = JSON.parse(lines[at] as string) as Exchange;
  const events = ex.response?.events ?? [];
  streamText = events.map(sseEventText).join('') + (ex.response?.tail ?? '');
  const text = eventLines(events);
  const name = `${sha(text)}.txt`;
  writeFileSync(path.join(dir, `${tape}.files`, name), text);
  delete ex.response?.events;
  (ex.response as NonNullable<Exchange['response']>).eventsFile = {
    kind: 'file',
    file: `${tape}.files/${name}`,
    encoding: 'text',
    bytes: Buffer.byteLength(text),
    sha256: sha(text),
    events: events.length,
  };
  lines[at] = JSON.stringify(ex);
  lines[0] = (lines[0] as string).replace(/"format":\d/, '"format":3');
  writeFileSync(file, lines.join('\n') + '\n');
}

/** The side files of a tape: the big answer's and the stream's. */
function sideFiles(tape: string): { answer: string; stream: string } {
  const files = readdirSync(path.join(dir, `${tape}.files`)).map((f) => path.join(dir, `${tape}.files`, f));
  const stream = files.find((f) => readFileSync(f, 'utf8').startsWith('{"offsetMs"')) as string;
  const answer = files.find((f) => f !== stream && readFileSync(f, 'utf8').includes(BIG)) as string;
  return { answer, stream };
}

/** A replay as the CLI starts it: exact matches, then the semantic stages (a streamed request finds a JSON answer). */
async function replay(tape: string, saveAs: string): Promise<RunningProxy> {
  return startProxy({
    mode: 'replay',
    tape,
    dir,
    port: 0,
    routes: [],
    saveAs,
    log: createLogger('silent'),
    matcher: (t) => createReplayMatcher(t.exchanges),
  });
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-apart-'));
  upstream = await startScriptedUpstream((req) => {
    const text = lastUserText(req.body);
    if (text === 'stream it') return openaiChatStream({ parts: ['one ', 'two ', 'three'], usage: [3, 3] });
    return openaiChat({ content: text === 'a big answer' ? BIG : `echo: ${text}` });
  });
  const rec = await startProxy({
    mode: 'record',
    tape: 'apart',
    dir,
    port: 0,
    routes: [{ prefix: '/openai', upstream: upstream.url }],
    log: createLogger('silent'),
  });
  try {
    for (const [q, s] of [
      ['a big answer', false],
      ['stream it', true],
      ['small', false],
    ] as const)
      await (await ask(rec.url, q, s)).text();
  } finally {
    await rec.close();
  }
  storeStreamApart('apart');
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a replay reads the answers stored apart when it serves them', () => {
  it('opening the tape leaves them in the store; each is served byte for byte', async () => {
    const proxy = await replay('apart', 'apart-r1');
    try {
      expect(proxy.source?.problems).toEqual([]);
      const [big, stream] = proxy.source?.exchanges ?? [];
      expect(big?.response?.body).toMatchObject({ kind: 'file', bytes: expect.any(Number) as number });
      expect(stream?.response?.eventsFile).toMatchObject({ kind: 'file', events: 7 });
      expect(stream?.response?.events).toBeUndefined();

      const answer = (await (await ask(proxy.url, 'a big answer')).json()) as { choices: { message: { content: string } }[] };
      expect(answer.choices[0]?.message.content).toBe(BIG);
      const streamed = await ask(proxy.url, 'stream it', true);
      expect(streamed.headers.get('x-tapedeck-match')).toBe('exact');
      expect(await streamed.text()).toBe(streamText);
    } finally {
      await proxy.close();
    }
  });

  it('an answer stored apart is still served in the shape asked for (a stream, from a JSON answer)', async () => {
    const proxy = await replay('apart', 'apart-r2');
    try {
      const res = await ask(proxy.url, 'a big answer', true);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      let content = '';
      for (const block of (await res.text()).split('\n\n')) {
        const data = block.replace(/^data: /, '');
        if (data === '' || data === '[DONE]') continue;
        content += (JSON.parse(data) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '';
      }
      expect(content).toBe(BIG);
    } finally {
      await proxy.close();
    }
  });

  it('a side file changed after the tape opened (same size) is never served as the answer: an error, or cut before its end', async () => {
    const proxy = await replay('apart', 'apart-r3');
    const files = sideFiles('apart');
    const saved = { answer: readFileSync(files.answer), stream: readFileSync(files.stream) };
    try {
      writeFileSync(files.answer, saved.answer.toString('utf8').replace('AAAA', 'BBBB'));
      writeFileSync(files.stream, saved.stream.toString('utf8').replace('three', 'THREE'));
      // A body (up to 16 MiB) is read whole when it is served: one that is not what was recorded is an error, said.
      const answer = await ask(proxy.url, 'a big answer');
      expect(answer.status).toBe(500);
      expect(await answer.json()).toMatchObject({
        error: {
          code: 'tapedeck_tape_corrupt',
          message: expect.stringMatching(/^stored body apart\.files\/.* recorded 2\d+ bytes/) as string,
        },
      });
      // A stream is read as it goes out: cut before its end.
      const streamed = await ask(proxy.url, 'stream it', true);
      await expect(streamed.text()).rejects.toThrow();
    } finally {
      await proxy.close();
      writeFileSync(files.answer, saved.answer);
      writeFileSync(files.stream, saved.stream);
    }
  });

  it('a side file missing or of another size is named when the tape opens, and its request misses', async () => {
    const files = sideFiles('apart');
    const saved = { answer: readFileSync(files.answer), stream: readFileSync(files.stream) };
    truncateSync(files.answer, 1000);
    unlinkSync(files.stream);
    const proxy = await replay('apart', 'apart-r4');
    try {
      expect(proxy.source?.problems.map((p) => p.message)).toEqual([
        expect.stringMatching(
          /^exchange 000000: side file .* is corrupt or unreadable \(it is 1000 bytes, recorded \d+ bytes\); exchange skipped$/,
        ),
        expect.stringMatching(/^exchange 000001: side file .* is corrupt or unreadable \(.*ENOENT.*\); exchange skipped$/),
      ]);
      const answer = await ask(proxy.url, 'a big answer');
      expect(answer.headers.get('x-tapedeck-match')).toBe('miss');
      await answer.arrayBuffer();
      const small = await ask(proxy.url, 'small');
      expect(((await small.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe('echo: small');
    } finally {
      await proxy.close();
      writeFileSync(files.answer, saved.answer);
      writeFileSync(files.stream, saved.stream);
    }
  });
});
