import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirStore } from '../../../src/tape/stores/dir-store.js';
import type { ResolveOptions } from '../../../src/tape/store.js';
import { runCliInProcess } from '../../helpers/cli-in-process.js';

let dir: string;
let outside: string;

function tape(file: string, createdAt: string, replayOf?: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const header = {
    type: 'header',
    format: 1,
    tapedeck: '0.1.0',
    name: path.basename(file, '.jsonl'),
    createdAt,
    mode: replayOf ? 'replay' : 'record',
    routes: [],
    ...(replayOf ? { replayOf: { tape: replayOf, onMiss: 'strict' } } : {}),
  };
  writeFileSync(file, JSON.stringify(header) + '\n');
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-resolve-'));
  outside = mkdtempSync(path.join(tmpdir(), 'tapedeck-outside-'));
  tape(path.join(dir, 'checkout-bug.jsonl'), '2026-01-01T00:00:00.000Z');
  tape(path.join(dir, 'checkout-ok.jsonl'), '2026-01-03T00:00:00.000Z');
  tape(path.join(dir, 'search.jsonl'), '2026-01-02T00:00:00.000Z');
  tape(path.join(dir, 'checkout-ok.replay-1.jsonl'), '2026-01-05T00:00:00.000Z', 'checkout-ok');
  tape(path.join(dir, 'ci/checkout-ok-41.jsonl'), '2026-01-04T00:00:00.000Z', 'checkout-ok');
  tape(path.join(outside, 'elsewhere.jsonl'), '2026-01-09T00:00:00.000Z');
});
const resolveTape = (d: string, ref: string, opts?: ResolveOptions) => createDirStore(d).resolve(ref, opts);
const replaysOf = (d: string, name: string) => createDirStore(d).replaysOf(name);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe('tape references', () => {
  it('a name, latest (replays only when asked), a unique prefix, a path anywhere', async () => {
    expect(await resolveTape(dir, 'search')).toMatchObject({ name: 'search', by: 'name' });
    expect(await resolveTape(dir, 'search.jsonl')).toMatchObject({ name: 'search', by: 'name' });
    expect(await resolveTape(dir, 'latest')).toMatchObject({ name: 'checkout-ok', by: 'latest' });
    expect(await resolveTape(dir, 'latest', { includeReplays: true })).toMatchObject({ name: 'checkout-ok.replay-1' });
    expect(await resolveTape(dir, 'latest-replay')).toMatchObject({ name: 'checkout-ok.replay-1', by: 'latest' });
    expect(await resolveTape(dir, 'sea')).toMatchObject({ name: 'search', by: 'prefix' });
    expect(await resolveTape(dir, 'ci/check')).toMatchObject({ name: 'ci/checkout-ok-41', by: 'prefix' });
    const file = path.join(outside, 'elsewhere.jsonl');
    const byPath = await resolveTape(dir, file);
    expect(byPath).toMatchObject({ name: 'elsewhere', by: 'path' });
    expect(byPath.store.location).toBe(outside);
    expect(byPath.store.where(byPath.name)).toBe(file);
  });

  it('refuses an ambiguous prefix with the candidates, and a name that matches nothing', async () => {
    await expect(resolveTape(dir, 'checkout')).rejects.toMatchObject({
      code: 'BAD_ARGS',
      message: expect.stringContaining('"checkout" is the start of 3 tapes (checkout-bug, checkout-ok, checkout-ok.replay-1)') as unknown,
    });
    await expect(resolveTape(dir, 'nope')).rejects.toMatchObject({ code: 'TAPE_NOT_FOUND' });
    // A slip of the keyboard names the closest tapes; one message, whatever the command.
    await expect(resolveTape(dir, 'serch')).rejects.toMatchObject({
      code: 'TAPE_NOT_FOUND',
      message: `no tape "serch" in ${dir}; did you mean "search"? (tapedeck list shows them)`,
    });
    expect((await replaysOf(dir, 'checkout-ok')).sort()).toEqual(['checkout-ok.replay-1', 'ci/checkout-ok-41']);
  });

  it('a prefix of a recording and its replays means the recording', async () => {
    expect(await resolveTape(dir, 'checkout-o')).toMatchObject({ name: 'checkout-ok', by: 'prefix' });
  });

  it('every command says the same for a tape that is not there, with exit 2', async () => {
    const messages = new Set<string>();
    for (const args of [
      ['show', 'serch'],
      ['cost', 'serch'],
      ['export', 'serch', '--format', 'har'],
      ['diff', 'serch', 'search'],
      ['rm', 'serch'],
      ['scan', 'serch'],
      ['side-effects', 'init', '--tape', 'serch', '--out', '-'],
    ]) {
      const r = await runCliInProcess([...args, '--dir', dir]);
      expect(r.code, args.join(' ')).toBe(2);
      messages.add(r.stderr.replace(/^tapedeck [\w-]+: /, '').trim());
    }
    expect([...messages]).toEqual([`no tape "serch" in ${dir}; did you mean "search"? (tapedeck list shows them)`]);
  });

  it('show and rm take references; rm --with-replays deletes the replays too', async () => {
    const show = await runCliInProcess(['show', 'latest', '--dir', dir, '--json']);
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout).name).toBe('checkout-ok');
    const timeline = await runCliInProcess(['show', 'latest', '--dir', dir]);
    expect(timeline.stdout.split('\n')[0]).toMatch(/^checkout-ok · record/);
    const init = await runCliInProcess(['side-effects', 'init', '--tape', 'sea', '--dir', dir, '--out', '-']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('search');
    const rm = await runCliInProcess(['rm', 'checkout-ok', '--with-replays', '--dir', dir]);
    expect(rm.code, rm.stderr).toBe(0);
    expect(rm.stdout.trim().split('\n')).toHaveLength(3);
    expect(existsSync(path.join(dir, 'checkout-ok.jsonl'))).toBe(false);
    expect(existsSync(path.join(dir, 'ci/checkout-ok-41.jsonl'))).toBe(false);
    expect(existsSync(path.join(dir, 'checkout-bug.jsonl'))).toBe(true);
    const ambiguous = await runCliInProcess(['rm', 'zzz', 'checkout-bug', '--dir', dir]);
    expect(ambiguous.code).toBe(2);
    expect(existsSync(path.join(dir, 'checkout-bug.jsonl'))).toBe(true); // one bad reference deletes nothing
  });
});
