/**
 * A throwaway PostgreSQL cluster from the machine's server binaries (`initdb` + `pg_ctl`), on a free loopback port
 * with its socket in a temp folder: started once per test run (vitest globalSetup), removed after. No mocks of the
 * database. `initdb` refuses to run as root, so as root the cluster belongs to the `postgres` user (runuser).
 * Where no server can start, the PostgreSQL cases skip with a one-line note; under `CI=true` they must run.
 *
 * `pg_ctl` starts the server in a session of its own, so it outlives the process that started it: an interrupted
 * run (Ctrl-C or SIGTERM to `npm test`, which vitest ends with `process.exit` and no teardown; a SIGKILL) would leave
 * it running. Each cluster has a guard: a small process of its own, holding a pipe from the process that started the
 * cluster; when the pipe closes without the word that the cluster was stopped (that process is gone, however it
 * went), the guard stops the cluster and removes its folder.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface PgCluster {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string;
  /** The folder the cluster lives in (data, socket, log): removed when it stops. */
  dir: string;
  stop(): void;
}

/**
 * The guard's program (run by node with the cluster's data folder, its folder, `pg_ctl`, and `root` when it runs as
 * the postgres user): wait for stdin to end; unless it said `stopped`, stop the cluster and remove its folder.
 */
const GUARD = `
const { execFileSync } = require('node:child_process');
const { rmSync } = require('node:fs');
const [data, base, pgCtl, root] = process.argv.slice(1);
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
let said = '';
process.stdin.on('data', (d) => (said += d));
process.stdin.on('end', () => {
  if (said.includes('stopped')) return;
  const cmd = root === 'root' ? ['runuser', '-u', 'postgres', '--', pgCtl] : [pgCtl];
  try {
    execFileSync(cmd[0], [...cmd.slice(1), '-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop'], { stdio: 'ignore' });
  } catch {}
  rmSync(base, { recursive: true, force: true });
});
`;

/** Start the guard of a cluster (see the file's comment); it never keeps this process alive. */
function startGuard(data: string, base: string, pgCtl: string, root: boolean): ChildProcess {
  const guard = spawn(process.execPath, ['-e', GUARD, data, base, pgCtl, root ? 'root' : ''], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  guard.unref();
  (guard.stdin as unknown as { unref(): void }).unref();
  return guard;
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
  // The guard first: from here on, a cluster (or a folder) this process cannot clean up is cleaned up by it.
  const guard = startGuard(data, base, path.join(bin, 'pg_ctl'), root);
  let port: number;
  try {
    if (root) {
      // The cluster and its socket belong to the postgres user.
      chmodSync(base, 0o700);
      chownSync(base, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
    }
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    port = await freePort();
    const options = [
      `-p ${port}`,
      `-k ${base}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c full_page_writes=off',
      '-c max_connections=200',
    ].join(' ');
    run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(base, 'log'), '-w', '-t', '60', 'start']);
  } catch (err) {
    guard.stdin?.end(); // it stops what may have started, and removes the folder
    throw err;
  }

  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir: base,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop']);
      } catch {
        // already gone
      }
      rmSync(base, { recursive: true, force: true });
      guard.stdin?.end('stopped');
    },
  };
}
