/**
 * `npx tapedeck ...` stopped from a script or a test runner: npm exec does not pass SIGTERM on to the command it
 * runs, so tapedeck must notice that the npm exec that started it is gone and stop as if signalled (its tape
 * finished and unlocked, its report printed), instead of running on with the tape locked.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLI_MAIN } from '../../helpers/cli.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-npx-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether a process is still running. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it.skipIf(process.platform === 'win32')(
  'tapedeck started by npm exec stops, finishing its tapes, when npm exec is killed',
  async () => {
    const args = ['exec', '--', process.execPath, CLI_MAIN];
    const record = ['record', '--tape', 'via-npx', '--dir', dir, '--port', '0', '--route', '/openai=http://127.0.0.1:9'];
    const npm = spawn('npm', [...args, ...record], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    npm.stderr.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      npm.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('listening on')) resolve();
      });
      npm.once('exit', (code) => reject(new Error(`npm exec exited (${code}) first: ${err}`)));
    });
    const lock = path.join(dir, 'via-npx.jsonl.lock');
    expect(existsSync(lock)).toBe(true);
    npm.kill('SIGTERM');
    // The tape is finished and unlocked, and what tapedeck printed on the way out reached the pipe.
    await expect.poll(() => existsSync(lock), { timeout: 15_000, interval: 100 }).toBe(false);
    await expect.poll(() => err, { timeout: 5_000 }).toMatch(/0 exchange\(s\) on tape "via-npx"/);
    // Nothing of it is left running.
    const running = (): string[] =>
      execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('--tape via-npx') && alive(Number(l.trim().split(' ')[0])));
    await expect.poll(running, { timeout: 10_000, interval: 100 }).toEqual([]);
  },
  60_000,
);
