import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTapeWriter, type NewExchange } from '../../../src/tape/stores/tape-writer.js';
import { readTape } from '../../../src/tape/tape-reader.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-writer-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const exchange = (i: number, body: unknown = { i }): NewExchange => ({
  startedAt: new Date().toISOString(),
  offsetMs: i,
  transport: 'http',
  route: '/openai',
  request: {
    method: 'POST',
    path: '/v1/chat/completions',
    query: [['key', 'AIza-SECRET']],
    headers: { 'x-goog-api-key': 'AIza-SECRET', 'content-type': 'application/json' },
    body: { kind: 'json', json: body },
  },
  response: { status: 200, headers: { 'set-cookie': 'sid=SECRET-COOKIE\nother=SECRET-2' }, body: { kind: 'text', text: `answer ${i}` } },
  timing: { durationMs: 1 },
});

describe('tape writer', () => {
  it('writes one line per exchange in schema key order, with secrets redacted on both sides', async () => {
    const w = await createTapeWriter({
      dir,
      name: 'a',
      header: { mode: 'record', routes: [{ prefix: '/g', upstream: 'https://user:pw@example.test/?key=AIza-SECRET' }] },
    });
    await w.append(exchange(1));
    await w.close();
    const text = readFileSync(path.join(dir, 'a.jsonl'), 'utf8');
    expect(text).not.toContain('SECRET');
    const [header, line] = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(header!)).toEqual(['type', 'format', 'tapedeck', 'name', 'createdAt', 'mode', 'routes']);
    expect(Object.keys(line!)).toEqual([
      'type',
      'id',
      'seq',
      'startedAt',
      'offsetMs',
      'transport',
      'route',
      'request',
      'response',
      'timing',
    ]);
    expect(Object.keys(line!.request as object)).toEqual(['method', 'path', 'query', 'headers', 'body']);
    expect((line!.request as { query: unknown }).query).toEqual([['key', '[REDACTED]']]);
  });

  it('never interleaves or loses lines when many exchanges are appended at once', async () => {
    const w = await createTapeWriter({ dir, name: 'many', header: { mode: 'record', routes: [] } });
    const written = await Promise.all(Array.from({ length: 500 }, (_, i) => w.append(exchange(i, { i, pad: 'x'.repeat(i * 10) }))));
    await w.close();
    const tape = await readTape(path.join(dir, 'many.jsonl'));
    expect(tape.problems).toEqual([]);
    expect(tape.exchanges.map((e) => e.id).sort()).toEqual(written.map((e) => e.id).sort());
    expect(new Set(tape.exchanges.map((e) => (e.request.body as { json: { i: number } }).json.i)).size).toBe(500);
  });

  it('stores a large body whole in a side file and reads it back', async () => {
    const big = 'y'.repeat(3 * 1024 * 1024);
    const w = await createTapeWriter({ dir, name: 'big', header: { mode: 'record', routes: [] } });
    await w.append(exchange(1, { prompt: big }));
    await w.close();
    expect(readFileSync(path.join(dir, 'big.jsonl'), 'utf8').length).toBeLessThan(10_000);
    expect(readdirSync(path.join(dir, 'big.files'))).toHaveLength(1);
    const tape = await readTape(path.join(dir, 'big.jsonl'));
    expect((tape.exchanges[0]!.request.body as { json: { prompt: string } }).json.prompt).toBe(big);
  });

  it('refuses an existing tape unless told to overwrite or append', async () => {
    const w = await createTapeWriter({ dir, name: 't', header: { mode: 'record', routes: [] } });
    await w.append(exchange(0));
    await w.close();
    await expect(createTapeWriter({ dir, name: 't', header: { mode: 'record', routes: [] } })).rejects.toMatchObject({
      code: 'TAPE_EXISTS',
    });
    const appended = await createTapeWriter({ dir, name: 't', ifExists: 'append', header: { mode: 'record', routes: [] } });
    const second = await appended.append(exchange(1));
    await appended.close();
    expect(second.seq).toBe(1);
    expect((await readTape(path.join(dir, 't.jsonl'))).exchanges.map((e) => e.id)).toEqual(['000000', '000001']);
    const fresh = await createTapeWriter({ dir, name: 't', ifExists: 'overwrite', header: { mode: 'record', routes: [] } });
    await fresh.close();
    expect((await readTape(path.join(dir, 't.jsonl'))).exchanges).toEqual([]);
  });

  it('rejects tape names that would escape the tape folder', async () => {
    await expect(createTapeWriter({ dir, name: '../evil', header: { mode: 'record', routes: [] } })).rejects.toMatchObject({
      code: 'BAD_ARGS',
    });
  });
});
