/**
 * The suite's PostgreSQL cluster does not outlive the run that started it, however the run ends: a process that
 * started one (as vitest's global setup does) is interrupted (SIGINT, as Ctrl-C sends) or killed outright (SIGKILL,
 * no handler runs), and the cluster's server stops and its folder goes (the cluster's guard, test/helpers/postgres.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { pgBin } from './postgres.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = path.join(ROOT, 'test/fixtures/pg-cluster-child.ts');
const bin = pgBin();
if (bin === undefined) console.log('skipped: no PostgreSQL server programs (initdb, pg_ctl) on this machine');

/** The PostgreSQL servers running on the cluster in `dir` (their command lines name its data folder). */
function serversOf(dir: string): string[] {
  const ps = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return ps.stdout.split('\n').filter((l) => l.includes(`-D ${path.join(dir, 'data')}`));
}

describe.skipIf(bin === undefined)('the suite leaves no PostgreSQL server behind', () => {
  it.each(['SIGINT', 'SIGKILL'] as const)(
    'the process that started a cluster ends by %s: the server stops, its folder goes',
    async (signal) => {
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      onTestFinished(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
      let out = '';
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const started = await new Promise<{ url: string; dir: string }>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] as string) as { url: string; dir: string });
        });
        child.once('exit', (code) => reject(new Error(`the cluster's process exited with ${code}: ${err}`)));
      });
      // At least the server (under load a starting wrapper may still show the same command line for a moment).
      expect(serversOf(started.dir).length).toBeGreaterThan(0);
      child.kill(signal);
      await new Promise((resolve) => child.once('exit', resolve));
      // A bound on the wait, not a measure: the guard stops the server at once (pg_ctl stop -m immediate).
      await expect
        .poll(() => serversOf(started.dir).length === 0 && !existsSync(started.dir), { timeout: 60_000, interval: 200 })
        .toBe(true);
    },
    180_000,
  );
});
