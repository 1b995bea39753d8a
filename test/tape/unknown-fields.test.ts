import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/front/server.js';
import { createLogger } from '../../src/log.js';
import { parseTapeRecords } from '../../src/tape/tape-reader.js';
import { unknownFields } from '../../src/tape/unknown-fields.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { copyCompatTapes } from '../fixtures/compat/compat.js';

/**
 * Fields the format does not know are ignored (a newer tapedeck's: test/tape/newer-tapes.test.ts), except one that
 * stands where the answer's content should be: that record would serve an empty answer, so it is not used.
 */
describe('a record with a field the format does not know', () => {
  it('names the field by its path, in objects and arrays; null and the known fields are not named', () => {
    expect(unknownFields({ a: 1, b: { c: [{ d: 1, e: 2 }] }, f: null }, { a: 1, b: { c: [{ d: 1 }] } })).toEqual(['b.c[0].e']);
    expect(unknownFields({ json: { anything: 1 } }, { json: { anything: 1 } })).toEqual([]);
  });

  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-unknown-'));
    copyCompatTapes(dir);
    // A streamed answer whose `events` were renamed (a hand edit): nothing of the answer is left that the reader knows.
    const file = path.join(dir, 'llm.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('stream the weather') && l.includes('"events":'));
    lines[at] = (lines[at] as string).replace('"events":', '"evnts":');
    writeFileSync(file, lines.join('\n'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is reported against its line and not used', () => {
    const text = readFileSync(path.join(dir, 'llm.jsonl'), 'utf8');
    const parsed = parseTapeRecords(
      'llm.jsonl',
      text.split('\n').map((t, i) => ({ line: i + 1, text: t })),
    );
    expect(parsed.problems).toEqual([
      { line: expect.any(Number) as number, message: expect.stringContaining('(response.evnts)') as string },
    ]);
    expect(parsed.exchanges.some((ex) => JSON.stringify(ex.request).includes('stream the weather'))).toBe(false);
  });

  it('a session line with a field it does not know: the field is named once, the line is used (the session ends)', () => {
    const text = readFileSync(path.join(dir, 'realtime.jsonl'), 'utf8').replace('{"type":"end",', '{"type":"end","endedBy":"me",');
    const parsed = parseTapeRecords(
      'realtime.jsonl',
      text.split('\n').map((t, i) => ({ line: i + 1, text: t })),
    );
    expect(parsed.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^1 record has fields this tapedeck \(.*\) does not know \(endedBy\): written by tapedeck 0\.1\.0; ignored$/),
    ]);
    expect(parsed.exchanges[0]?.error).toBeUndefined();
  });

  it('show says so; replay answers that request with a miss, never an empty 200', async () => {
    const shown = await runCliInProcess(['show', 'llm', '--dir', dir]);
    expect(shown.stderr).toMatch(
      /tapedeck show: llm: line \d+: the exchange's answer is in a field the tape format does not know \(response\.evnts\)/,
    );
    const proxy = await startProxy({
      mode: 'replay',
      tape: 'llm',
      dir,
      port: 0,
      routes: [],
      saveAs: 'llm-edited',
      log: createLogger('silent'),
    });
    try {
      const res = await fetch(`${proxy.url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'stream the weather' }],
          stream: true,
          stream_options: { include_usage: true },
        }),
      });
      expect(res.headers.get('x-tapedeck-match')).toBe('miss');
      expect(res.status).not.toBe(200);
      await res.arrayBuffer();
    } finally {
      await proxy.close();
    }
  });
});
