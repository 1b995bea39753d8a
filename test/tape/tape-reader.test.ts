import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTape } from '../../src/tape/tape-reader.js';
import { createTapeWriter } from '../../src/tape/stores/tape-writer.js';
import { VERSION } from '../../src/version.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-reader-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const header = (format: unknown): string =>
  JSON.stringify({
    type: 'header',
    format,
    tapedeck: '9.4.0',
    name: 't',
    createdAt: '2030-01-01T00:00:00.000Z',
    mode: 'record',
    routes: [],
    newField: 1,
  });

const line = (id: string, body: unknown): string =>
  JSON.stringify({
    type: 'exchange',
    id,
    seq: Number(id),
    startedAt: '2030-01-01T00:00:00.000Z',
    offsetMs: 0,
    transport: 'http',
    route: '/x',
    request: { method: 'GET', path: '/y', query: [], headers: {}, body: { kind: 'empty' } },
    response: { status: 200, headers: {}, body },
    timing: { durationMs: 1 },
  });

describe('tape reader', () => {
  it('names the format and the tapedeck that wrote a tape from the future', async () => {
    writeFileSync(path.join(dir, 'future.jsonl'), header(4) + '\n');
    await expect(readTape(path.join(dir, 'future.jsonl'))).rejects.toMatchObject({
      code: 'TAPE_FORMAT_UNSUPPORTED',
      message: `tape ${path.join(dir, 'future.jsonl')} was written by tapedeck 9.4.0 in format 4; this tapedeck (${VERSION}) reads format 1, 2 and 3: upgrade tapedeck`,
    });
  });

  it('never reads a side file outside the tape folder, nor one whose bytes do not match, and reports the exchange', async () => {
    const tapePath = path.join(dir, 't.jsonl');
    mkdirSync(path.join(dir, 't.files'));
    const secret = 'root:x:0:0:outside\n';
    writeFileSync(path.join(dir, 'outside.txt'), secret);
    const good = 'good body';
    const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
    writeFileSync(path.join(dir, 't.files', 'good.txt'), good);
    writeFileSync(path.join(dir, 't.files', 'changed.txt'), 'tampered');
    symlinkSync(path.join(dir, 'outside.txt'), path.join(dir, 't.files', 'link.txt'));
    const file = (name: string, content: string) => ({
      kind: 'file',
      file: name,
      encoding: 'text',
      bytes: Buffer.byteLength(content),
      sha256: sha(content),
    });
    writeFileSync(
      tapePath,
      [
        header(1),
        line('000000', file('t.files/good.txt', good)),
        line('000001', file('t.files/../outside.txt', secret)),
        line('000002', file(path.join(dir, 'outside.txt'), secret)),
        line('000003', file('t.files/changed.txt', 'original')),
        line('000004', file('t.files/link.txt', secret)),
      ].join('\n') + '\n',
    );
    const tape = await readTape(tapePath);
    expect(tape.exchanges.map((e) => e.id)).toEqual(['000000']);
    expect(tape.exchanges[0]!.response!.body).toEqual({ kind: 'text', text: good });
    expect(tape.problems.map((p) => p.message)).toEqual([
      // The header's field from tapedeck 9.4.0, ignored and named once.
      expect.stringMatching(/^1 record has fields this tapedeck .* does not know \(newField\): written by tapedeck 9\.4\.0; ignored$/),
      expect.stringMatching(/exchange 000001: side file t\.files\/\.\.\/outside\.txt is corrupt .*outside the tape's folder/),
      expect.stringMatching(/exchange 000002: .*outside the tape's folder/),
      expect.stringMatching(/exchange 000003: .*sha256 [0-9a-f]{12}\.\.\., recorded/),
      expect.stringMatching(/exchange 000004: .*a link to a file outside the folder/),
    ]);
    expect(JSON.stringify(tape)).not.toContain('root:x');
  });

  it('reads the side files the writer wrote', async () => {
    const w = await createTapeWriter({ dir, name: 'w', header: { mode: 'record', routes: [] }, largeBodyBytes: 10 });
    await w.append({
      startedAt: new Date().toISOString(),
      offsetMs: 0,
      transport: 'http',
      route: '/x',
      request: { method: 'POST', path: '/y', query: [], headers: {}, body: { kind: 'text', text: 'a body longer than ten bytes' } },
      timing: { durationMs: 1 },
    });
    await w.close();
    const tape = await readTape(path.join(dir, 'w.jsonl'));
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges[0]!.request.body).toEqual({ kind: 'text', text: 'a body longer than ten bytes' });
  });
});
