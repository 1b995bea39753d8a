/**
 * A throwaway PostgreSQL cluster from the machine's server binaries (`initdb` + `pg_ctl`), on a free loopback port
 * with its socket in a temp folder: started once per test run (vitest globalSetup), removed after. No mocks of the
 * database. `initdb` refuses to run as root, so as root the cluster belongs to the `postgres` user (runuser).
 * Where no server can start, the PostgreSQL cases skip with a one-line note; under `CI=true` they must run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface PgCluster {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string;
  stop(): void;
}

/** The folder holding `initdb` and `pg_ctl`: PG_BIN, then Debian's /usr/lib/postgresql/<newest>/bin, then PATH. */
export function pgBin(): string | undefined {
  if (process.env.PG_BIN && existsSync(path.join(process.env.PG_BIN, 'initdb'))) return process.env.PG_BIN;
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => existsSync(path.join(debian, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return path.join(debian, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  return which.status === 0 ? path.dirname(which.stdout.trim()) : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = pgBin();
  if (bin === undefined) throw new Error('no PostgreSQL server binaries (initdb) on this machine: install the postgresql package');
  const root = process.getuid?.() === 0;
  const base = mkdtempSync(path.join(tmpdir(), 'tapedeck-pg-'));
  const data = path.join(base, 'data');
  const run = (cmd: string, args: string[]): void => {
    const full = root ? ['runuser', '-u', 'postgres', '--', path.join(bin, cmd), ...args] : [path.join(bin, cmd), ...args];
    execFileSync(full[0] as string, full.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  };
  if (root) {
    // The cluster and its socket belong to the postgres user.
    chmodSync(base, 0o700);
    chownSync(base, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  }

  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${base}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(base, 'log'), '-w', '-t', '60', 'start']);

  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop']);
      } catch {
        // already gone
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}
