import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pruneCommand } from '../../../src/cli/prune.js';
import { rmCommand } from '../../../src/cli/rm.js';
import { createDirStore } from '../../../src/tape/stores/dir-store.js';
import { parseAge, pruneTapes } from '../../../src/tape/stores/housekeeping.js';
import { runCommand } from '../../helpers/run-command.js';

let dir: string;
const header = (name: string, createdAt: string): string =>
  JSON.stringify({ type: 'header', format: 1, tapedeck: '0.1.0', name, createdAt, mode: 'record', routes: [] }) + '\n';
const DAY = 86_400_000;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-hk-'));
  const now = Date.now();
  writeFileSync(path.join(dir, 'old.jsonl'), header('old', new Date(now - 40 * DAY).toISOString()));
  mkdirSync(path.join(dir, 'old.files'));
  writeFileSync(path.join(dir, 'old.files', 'abc'), 'big body');
  writeFileSync(path.join(dir, 'new.jsonl'), header('new', new Date(now - 2 * DAY).toISOString()));
  mkdirSync(path.join(dir, 'team'));
  writeFileSync(path.join(dir, 'team', 'older.jsonl'), header('team/older', new Date(now - 31 * DAY).toISOString()));
  writeFileSync(path.join(dir, 'broken.jsonl'), 'not json\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('housekeeping', () => {
  it('parses ages in s/m/h/d and refuses anything else with a clear message', () => {
    expect(parseAge('30d')).toBe(30 * DAY);
    expect(parseAge('12h')).toBe(12 * 3_600_000);
    expect(parseAge('90m')).toBe(90 * 60_000);
    expect(parseAge('45s')).toBe(45_000);
    for (const bad of ['30', 'd', '30w', '-3d', ''])
      expect(() => parseAge(bad)).toThrow(/bad duration .*use a number and a unit s, m, h or d/);
  });

  it('rm removes the tape and its side folder; a missing tape is TAPE_NOT_FOUND', async () => {
    const store = createDirStore(dir);
    const r = await store.remove('old');
    expect(r.sideFiles).toBe(true);
    expect(existsSync(path.join(dir, 'old.jsonl'))).toBe(false);
    expect(existsSync(path.join(dir, 'old.files'))).toBe(false);
    await expect(store.remove('old')).rejects.toMatchObject({ code: 'TAPE_NOT_FOUND' });
    const cli = await runCommand(rmCommand, ['new', '--dir', dir]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('removed');
    expect(existsSync(path.join(dir, 'new.jsonl'))).toBe(false);
  });

  it('prune removes by header createdAt, keeps newer tapes, skips unreadable ones; dry run removes nothing', async () => {
    const dry = await pruneTapes(createDirStore(dir), { olderThanMs: 30 * DAY, dryRun: true });
    expect(dry.removed.map((t) => t.name).sort()).toEqual(['old', 'team/older']);
    expect(dry.kept).toBe(1);
    expect(dry.skipped.map((s) => s.name)).toEqual(['broken']);
    expect(existsSync(path.join(dir, 'old.jsonl'))).toBe(true);

    const cli = await runCommand(pruneCommand, ['--older-than', '30d', '--dir', dir]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('removed 2 tape(s)');
    expect(cli.stderr).toContain('skipped broken');
    expect(existsSync(path.join(dir, 'old.jsonl'))).toBe(false);
    expect(existsSync(path.join(dir, 'old.files'))).toBe(false);
    expect(existsSync(path.join(dir, 'team', 'older.jsonl'))).toBe(false);
    expect(existsSync(path.join(dir, 'new.jsonl'))).toBe(true);
  });

  it('prune refuses a bad duration before touching anything', async () => {
    await expect(runCommand(pruneCommand, ['--older-than', '30 days', '--dir', dir])).rejects.toMatchObject({
      code: 'BAD_ARGS',
      message: expect.stringContaining('bad duration "30 days"') as unknown,
    });
    expect(existsSync(path.join(dir, 'old.jsonl'))).toBe(true);
  });
});
