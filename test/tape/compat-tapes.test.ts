/**
 * Tapes recorded by an earlier build (test/fixtures/compat/v1: 300a2bb, before the exchange engine) keep working:
 * each reads without a problem, replays to its clients exactly as it did with the build that recorded it (the same
 * answers, the same replay tape), and `show --json` and `export` print what that build printed. The goldens were
 * written by test/fixtures/compat/make.ts with that build; a change that alters one on purpose says so in its commit.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { CLI_MAIN } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { COMPAT_TAPES, copyCompatTapes, GOLDEN, READERS, replayCompatTape, stable, TAPES } from '../fixtures/compat/compat.js';

const golden = (file: string): unknown => JSON.parse(readFileSync(path.join(GOLDEN, file), 'utf8'));

describe('tapes recorded by the build before the exchange engine', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-compat-'));
    copyCompatTapes(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(COMPAT_TAPES)('%s: reads without a problem', async (tape) => {
    const loaded = await createDirStore(TAPES).load(tape);
    expect(loaded.problems).toEqual([]);
    expect(loaded.exchanges.length).toBeGreaterThan(0);
  });

  it.each(COMPAT_TAPES)('%s: replays to its clients as it did, and writes the same replay tape', async (tape) => {
    const replayed = await replayCompatTape(tape, dir, CLI_MAIN);
    expect(stable(replayed.client)).toEqual(golden(`${tape}.client.json`));
    expect(replayed.records).toEqual(golden(`${tape}.replay.json`));
  });

  it.each(COMPAT_TAPES)('%s: show --json and export print what they did', async (tape) => {
    for (const [kind, args] of Object.entries(READERS)) {
      const out = await runCliInProcess([...args(tape), '--dir', TAPES], { NO_COLOR: '1' });
      expect(out.code, out.stderr).toBe(0);
      expect(stable(JSON.parse(out.stdout)), `${kind} of ${tape}`).toEqual(golden(`${tape}.${kind}.json`));
    }
  });
});
