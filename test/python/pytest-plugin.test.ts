import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI_MAIN } from '../helpers/cli.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PLUGIN = path.join(ROOT, 'python/pytest-tapedeck');

/** pytest and the Python openai SDK, where they install (.ci/run tries); without them the plugin's tests skip. */
const python = spawnSync('python3', ['-c', 'import pytest, openai'], { stdio: 'ignore' });
const ready = python.status === 0;

describe('python/pytest-tapedeck (its own tests, run by pytest)', () => {
  it.skipIf(!ready)(
    'records each test on its own tape, then replays them with the upstream gone; finds tapedeck, says in one line when it cannot; builds with nothing to download',
    () => {
      const run = spawnSync('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
        cwd: PLUGIN,
        // tapedeck from this checkout's source, so the plugin is tested against the CLI as it is now.
        env: {
          ...process.env,
          PYTHONPATH: PLUGIN,
          PYTHONDONTWRITEBYTECODE: '1',
          TAPEDECK_COMMAND: `"${process.execPath}" "${CLI_MAIN}"`,
          TAPEDECK_URL: '',
        },
        encoding: 'utf8',
        // A bound against a hang, not a time target: some twenty pytest sessions, each starting tapedeck, took over
        // 6 minutes on a loaded 2-core machine.
        timeout: 900_000,
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      // Every test ran: none skipped, none failed (their count changes as tests are added).
      expect(run.stdout).toMatch(/\d+ passed in /);
      expect(run.stdout).not.toMatch(/skipped|failed|error/);
    },
    960_000,
  );
  if (!ready) it.skip('pytest or the Python openai SDK is not installed: the pytest plugin tests are skipped', () => undefined);
});
