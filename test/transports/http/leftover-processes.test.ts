/**
 * Wrapper mode leaves no processes behind: what the command starts in its process group ends with it; the command
 * dies when tapedeck is killed with `kill -9`; and under `--sandbox` (its own PID namespace) a daemon that left the
 * group with `setsid` ends too. Processes are found by a unique `sleep` duration in their command line (inside the
 * sandbox they have other pids).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxSupport } from '../../../src/run/sandbox.js';
import { runCli, spawnCli } from '../../helpers/cli.js';

const linux = process.platform === 'linux';
const support = linux ? sandboxSupport() : { ok: false as const, reason: 'not Linux' };
let dir: string;
let env: NodeJS.ProcessEnv;
const markers: string[] = [];

/** The pids whose command line holds `marker` (Linux /proc). */
function running(marker: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(marker)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function gone(marker: string, withinMs = 5000): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (running(marker).length === 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return running(marker).length === 0;
}

/** A `sleep` long enough to outlive any test, told apart by its duration. */
function marker(): string {
  const m = String(900_000 + Math.floor(Math.random() * 90_000));
  markers.push(m);
  return m;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-leftover-'));
  env = { TAPEDECK_CA_DIR: path.join(dir, 'ca') };
});
afterAll(() => {
  // Never leave a test's own processes behind, whatever the assertions said.
  for (const m of markers) for (const pid of running(m)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Start `record -- sh -c SCRIPT`, wait for the script to say "started", then kill -9 tapedeck. */
async function killDuringRun(script: string, extra: string[] = []): Promise<void> {
  const child = spawnCli(['record', '--tape', `k${markers.length}`, '--dir', dir, '--overwrite', ...extra, '--', 'sh', '-c', script], env);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('started')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`tapedeck exited (${code}) before the command started`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r)));
}

describe.skipIf(!linux)(
  'wrapper mode without the sandbox',
  () => {
    it('ends what the command left running in its process group when it exits', async () => {
      const m = marker();
      const r = await runCli(['record', '--tape', 'bg', '--dir', dir, '--', 'sh', '-c', `sleep ${m} & echo started`], env);
      expect(r.code, r.stderr).toBe(0);
      expect(await gone(m)).toBe(true);
    });

    it('the command and what it started die when tapedeck is killed with kill -9', async () => {
      const child = marker();
      const command = marker();
      // (after the few milliseconds tapedeck takes to start the watchdog: process-group.ts)
      await killDuringRun(`sleep ${child} & sleep 0.2; echo started; sleep ${command}`);
      expect(await gone(child)).toBe(true);
      expect(await gone(command)).toBe(true);
    });
  },
  60_000,
);

describe('wrapper mode in the sandbox (its own PID namespace)', () => {
  const why = support.ok ? '' : ` (skipped: ${support.reason})`;
  it.skipIf(!support.ok)(`a daemon that left the process group (setsid) ends when the command exits${why}`, async () => {
    const m = marker();
    const r = await runCli(
      ['record', '--tape', 'daemon', '--dir', dir, '--sandbox', '--', 'sh', '-c', `setsid sleep ${m} & sleep 0.2; echo started`],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('started');
    expect(await gone(m)).toBe(true);
  });

  it.skipIf(!support.ok)(`kill -9 of tapedeck ends the command and its daemons${why}`, async () => {
    const daemon = marker();
    const command = marker();
    await killDuringRun(`setsid sleep ${daemon} & sleep 0.2; echo started; sleep ${command}`, ['--sandbox']);
    expect(await gone(command)).toBe(true);
    expect(await gone(daemon)).toBe(true);
  });
}, 60_000);
