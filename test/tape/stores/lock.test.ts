import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTapeWriter } from '../../../src/tape/stores/tape-writer.js';
import { runCli, spawnCli, waitForListening } from '../../helpers/cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-lock-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const header = { mode: 'record' as const, routes: [] };

describe('one writer per tape', () => {
  it('refuses a second writer (append or overwrite) while the first is open, naming the holder; frees the tape on close', async () => {
    const first = await createTapeWriter({ dir, name: 'a', header });
    for (const ifExists of ['append', 'overwrite'] as const) {
      await expect(createTapeWriter({ dir, name: 'a', ifExists, header })).rejects.toMatchObject({
        code: 'TAPE_LOCKED',
        message: expect.stringContaining(`tape "a" is locked by pid ${process.pid}`) as unknown,
      });
    }
    await first.close();
    expect(existsSync(path.join(dir, 'a.jsonl.lock'))).toBe(false);
    const second = await createTapeWriter({ dir, name: 'a', ifExists: 'append', header });
    await second.close();
  });

  it('takes over a stale lock whose holder is gone', async () => {
    const dead = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('exit', () => resolve(child.pid!));
    });
    writeFileSync(path.join(dir, 'b.jsonl.lock'), JSON.stringify({ pid: dead, host: hostname(), since: new Date().toISOString() }));
    const w = await createTapeWriter({ dir, name: 'b', header });
    await w.close();
    // An unreadable lock (a holder that died between creating and writing it) is stale too.
    writeFileSync(path.join(dir, 'b.jsonl.lock'), '');
    const again = await createTapeWriter({ dir, name: 'b', ifExists: 'overwrite', header });
    await again.close();
  });

  it('refuses a second recorder process on the same tape with the first one pid, and recovers after kill -9', async () => {
    const first = spawnCli(['record', '--tape', 'shared', '--dir', dir, '--port', '0']);
    try {
      await waitForListening(first);
      const second = await runCli(['record', '--tape', 'shared', '--dir', dir, '--port', '0', '--append']);
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain(`tape "shared" is locked by pid ${first.pid}`);
    } finally {
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));
    }
    // The holder is gone: its lock is stale, and the next recorder takes the tape.
    const third = spawnCli(['record', '--tape', 'shared', '--dir', dir, '--port', '0', '--append']);
    try {
      await waitForListening(third);
    } finally {
      third.kill('SIGTERM');
      await new Promise((resolve) => third.once('exit', resolve));
    }
    expect(existsSync(path.join(dir, 'shared.jsonl.lock'))).toBe(false);
  });
});
