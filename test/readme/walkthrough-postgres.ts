/**
 * What a walkthrough that starts a PostgreSQL cluster of its own (docs/shared-store.md: `initdb`, `pg_ctl`) needs
 * from the machine: the server programs on the PATH (found as the store's tests find them, test/helpers/postgres.ts,
 * since Debian keeps them off the PATH), and, when the tests run as root, which `initdb` refuses, `initdb` and
 * `pg_ctl` run as the `postgres` user, the folder the cluster goes in handed to that user first. The page's text is
 * run as written either way; where no server programs exist, such a walkthrough is skipped with a note (under
 * CI=true it must run).
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pgBin } from '../helpers/postgres.js';
import type { Walkthrough } from './walkthroughs.js';

/** Whether the walkthrough starts a cluster of its own. */
export const needsPostgres = (w: Walkthrough): boolean => /^\s*initdb\b/m.test(w.script);

/**
 * The folders to put first on the walkthrough's PATH (created once in `scratch`), or undefined when this machine has
 * no PostgreSQL server programs.
 */
export function postgresPath(scratch: string): string | undefined {
  const bin = pgBin();
  if (bin === undefined) return undefined;
  if (process.getuid?.() !== 0) return bin;
  const wrappers = path.join(scratch, 'pg-as-postgres');
  if (!existsSync(wrappers)) {
    mkdirSync(wrappers, { recursive: true });
    // initdb -D DIR: DIR's parent is created and given to the postgres user, who then owns all the cluster holds.
    const initdb = [
      '#!/bin/sh',
      'prev=; data=',
      'for a in "$@"; do [ "$prev" = -D ] && data=$a; prev=$a; done',
      '[ -n "$data" ] && mkdir -p "$(dirname "$data")" && chown postgres "$(dirname "$data")"',
      `exec runuser -u postgres -- ${JSON.stringify(path.join(bin, 'initdb'))} "$@"`,
    ];
    const pgCtl = ['#!/bin/sh', `exec runuser -u postgres -- ${JSON.stringify(path.join(bin, 'pg_ctl'))} "$@"`];
    for (const [name, lines] of [
      ['initdb', initdb],
      ['pg_ctl', pgCtl],
    ] as const) {
      writeFileSync(path.join(wrappers, name), `${lines.join('\n')}\n`);
      chmodSync(path.join(wrappers, name), 0o755);
    }
  }
  return `${wrappers}${path.delimiter}${bin}`;
}
