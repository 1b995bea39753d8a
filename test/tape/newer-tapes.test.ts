/**
 * A tape written by a newer tapedeck at the same format number: fields this version does not know (in the header,
 * in exchanges, in a request, in a session's lines) are ignored, with one warning for the tape, and the tape is
 * served as if they were not there; a copy (push / pull) keeps them, byte for byte. Only a higher format number is
 * refused, in one line naming the tapedeck that wrote it, exit 2.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { VERSION } from '../../src/version.js';
import { CLI_MAIN } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { copyCompatTapes, GOLDEN, replayCompatTape, stable } from '../fixtures/compat/compat.js';

const golden = (file: string): unknown => JSON.parse(readFileSync(path.join(GOLDEN, file), 'utf8'));

/** Every record of a tape given fields no tapedeck knows yet, as a newer one might write them. */
function fromTheFuture(file: string): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out = lines.map((text) => {
    if (text.trim() === '') return text;
    const rec = JSON.parse(text) as Record<string, unknown>;
    rec.futureField = { added: 'later', n: 1 };
    if (rec.type === 'header') rec.tapedeck = '99.0.0';
    if (rec.type === 'exchange') {
      (rec.request as Record<string, unknown>).futureReq = 'x';
      const res = rec.response as Record<string, unknown> | undefined;
      if (res !== undefined) res.futureRes = [1, 2];
    }
    return JSON.stringify(rec);
  });
  writeFileSync(file, out.join('\n'));
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-newer-'));
  copyCompatTapes(dir);
  for (const tape of ['llm', 'realtime', 'mcp-http']) fromTheFuture(path.join(dir, `${tape}.jsonl`));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a tape from a newer tapedeck, at the same format', () => {
  it('reads every record, with one warning for the tape naming the fields and who wrote them', async () => {
    const loaded = await createDirStore(dir).load('llm');
    const original = await createDirStore(dir).load('wrapper'); // untouched: a sanity check of the fixture copy
    expect(original.problems).toEqual([]);
    expect(loaded.exchanges).toHaveLength(14);
    expect(loaded.problems).toHaveLength(1);
    expect(loaded.problems[0]?.message).toMatch(
      new RegExp(
        `^15 records have fields this tapedeck \\(${VERSION.replace(/\./g, '\\.')}\\) does not know \\(futureField, request\\.futureReq, response\\.futureRes\\): ` +
          'written by tapedeck 99\\.0\\.0; ignored$',
      ),
    );
    // What is known reads as it always did: the unknown fields are not carried into the record.
    expect(JSON.stringify(loaded.exchanges)).not.toContain('future');
  });

  it.each(['llm', 'realtime', 'mcp-http'] as const)('%s: replays to its clients as the tape without them does', async (tape) => {
    const replayed = await replayCompatTape(tape, dir, CLI_MAIN);
    expect(stable(replayed.client)).toEqual(golden(`${tape}.client.json`));
  });

  it('show warns once, not once per line', async () => {
    const shown = await runCliInProcess(['show', 'llm', '--dir', dir], { NO_COLOR: '1' });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stderr.trim().split('\n')).toEqual([expect.stringContaining('does not know (futureField') as string]);
  });

  it('a session line with a field it does not know is merged all the same: the session is not cut', async () => {
    const loaded = await createDirStore(dir).load('realtime');
    expect(loaded.problems).toHaveLength(1);
    expect(loaded.exchanges[0]?.error).toBeUndefined();
    expect(loaded.exchanges[0]?.websocket?.frames.length).toBeGreaterThan(4);
  });
});

describe('a tape in a higher format', () => {
  it('is refused in one line naming the tapedeck that wrote it, exit 2', async () => {
    const file = path.join(dir, 'llm.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[0] = (lines[0] as string).replace('"format":1', '"format":7');
    writeFileSync(path.join(dir, 'format7.jsonl'), lines.join('\n'));
    const shown = await runCliInProcess(['show', 'format7', '--dir', dir], { NO_COLOR: '1' });
    expect(shown.code).toBe(2);
    expect(shown.stderr).toBe(
      `tapedeck show: tape ${path.join(dir, 'format7.jsonl')} was written by tapedeck 99.0.0 in format 7; this tapedeck (${VERSION}) reads format 1, 2 and 3: upgrade tapedeck\n`,
    );
  });
});

const pgUrl = inject('pgUrl');
const d = pgUrl === null ? describe.skip : describe;
if (pgUrl === null) console.warn(inject('pgNote'));

d('copied between stores', () => {
  it('push and pull keep the fields this tapedeck does not know, byte for byte', async () => {
    const store = `${pgUrl as string}?namespace=newer-${process.pid}`;
    const push = await runCliInProcess(['push', 'llm', 'realtime', '--to', store, '--dir', dir]);
    expect(push.code, push.stderr).toBe(0);
    const back = mkdtempSync(path.join(tmpdir(), 'tapedeck-newer-pull-'));
    try {
      const pull = await runCliInProcess(['pull', 'llm', 'realtime', '--from', store, '--dir', back]);
      expect(pull.code, pull.stderr).toBe(0);
      for (const tape of ['llm', 'realtime'])
        expect(readFileSync(path.join(back, `${tape}.jsonl`), 'utf8')).toBe(readFileSync(path.join(dir, `${tape}.jsonl`), 'utf8'));
      const loaded = await createDirStore(back).load('llm');
      expect(loaded.exchanges).toHaveLength(14);
    } finally {
      rmSync(back, { recursive: true, force: true });
    }
  });
});
