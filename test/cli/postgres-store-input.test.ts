/**
 * What reaches the PostgreSQL store from outside tapedeck, treated as input: store URLs (printed only redacted,
 * whatever their form, and never echoed when they cannot be parsed), and rows written by someone else with access
 * to the database (a tape name holding terminal escapes, totals that are not what tapedeck writes), which are
 * reported against themselves, never printed raw and never fatal to a listing.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createPgStore } from '../../src/tape/stores/postgres/pg-store.js';
import { startViewer } from '../../src/view/viewer.js';
import { runCli } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { newExchange } from '../tape/store-contract.js';

const pgUrl = inject('pgUrl');
const d = pgUrl === null ? describe.skip : describe;
if (pgUrl === null) console.warn(inject('pgNote'));

const ESC = '\u001b';

describe('store URLs are never printed whole', () => {
  // Each holds a password (SECRET...) that must never be printed; none can be parsed as a URL by pg.
  const unreadable = [
    'postgres://alice:pa#ss-SECRET1@127.0.0.1:1/db',
    'postgres://alice:pa/ss-SECRET2@127.0.0.1:1/db',
    'postgres://alice:pa?ss-SECRET3@127.0.0.1:1/db',
    'host=127.0.0.1 port=1 dbname=db password=SECRET4',
    "host=127.0.0.1 password='SECRET5 with spaces'",
    'mysql://alice:pa#ss-SECRET6@127.0.0.1/db',
  ];

  it.each(unreadable)('refuses %s in one line, exit 2, from --store and TAPEDECK_STORE alike, without printing it', async (url) => {
    for (const r of [
      await runCliInProcess(['list', '--store', url]),
      await runCliInProcess(['list'], { TAPEDECK_STORE: url }),
      await runCliInProcess(['pull', 'x', '--from', url]),
    ]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toMatch(/SECRET|pa#ss|pa\/ss|pa\?ss/);
      expect(r.stderr).toContain('not printed, as it may hold a password');
    }
  });

  it('says what to do: percent-encode the password; use a URL for a keyword/value string', async () => {
    const hash = await runCliInProcess(['list', '--store', unreadable[0] as string]);
    expect(hash.stderr).toContain('percent-encode # / ? @ : and spaces in the user name and password (# as %23');
    const kv = await runCliInProcess(['list', '--store', unreadable[3] as string]);
    expect(kv.stderr).toContain('a keyword/value connection string (host=... dbname=...), not a URL');
  });

  it('a password holding @ connects as pg reads it, and is printed as ***, from a process too', async () => {
    const r = await runCli(['list', '--store', 'postgres://alice:p@ss-SECRET7@127.0.0.1:1/db']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('the tape store postgres://alice:***@127.0.0.1:1/db refused the connection');
    expect(r.stderr).not.toContain('SECRET7');
  });
});

d('secret parameters of a store URL', () => {
  it('sslpassword and password parameters show as *** in list', async () => {
    const r = await runCliInProcess([
      'list',
      '--store',
      `${pgUrl as string}?sslpassword=SECRET8&application_name=x&namespace=input-${process.pid}-empty`,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^no tapes in postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\?sslpassword=\*\*\*&application_name=x \(namespace/,
    );
    expect(r.stdout).not.toContain('SECRET8');
  });
});

d('rows written by someone else with access to the database', () => {
  const ns = `input-${process.pid}`;
  const evil = `evil${ESC}[2J${ESC}]0;pwned${String.fromCharCode(7)}`;
  let viewerUrl: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const s = await createPgStore(pgUrl as string, { namespace: ns });
    const w = await s.openWriter({ name: 'good', header: { mode: 'record', routes: [] } });
    await w.append(newExchange({ model: 'gpt-4.1-mini' }));
    await w.close();
    const admin = new pg.Client(pgUrl as string);
    await admin.connect();
    try {
      // The newest rows: a name tapedeck would never write (terminal escapes), and totals that are not tapedeck's.
      const copy = `INSERT INTO tapedeck_tapes (namespace, name, created_at, mode, header, stats)
        SELECT namespace, $2, now() + $4::interval, mode, header, $3::jsonb FROM tapedeck_tapes WHERE namespace = $1 AND name = 'good'`;
      await admin.query(copy, [ns, evil, JSON.stringify({ exchanges: 1 }), '2 minutes']);
      await admin.query(copy, [ns, 'broken', '{"exchanges":"lots","tokens":null}', '1 minute']);
    } finally {
      await admin.end();
    }
    const viewer = await startViewer({ store: s, port: 0, log: createLogger('silent') });
    viewerUrl = viewer.url;
    close = async () => {
      await viewer.close();
      await s.close();
    };
  });
  afterAll(async () => close?.());

  const store = (): string => `${pgUrl as string}?namespace=${ns}`;

  it('list reports each bad row against itself, shows control characters escaped, and exits 0', async () => {
    const r = await runCliInProcess(['list', '--store', store()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain(ESC);
    expect(r.stdout).not.toContain(String.fromCharCode(7));
    expect(r.stdout).toContain('! broken: unreadable: its totals (stats column) are not what tapedeck writes (exchanges)');
    expect(r.stdout).toContain('! evil\\x1b[2J\\x1b]0;pwned\\x07: unreadable: not a tape name tapedeck writes');
    expect(r.stdout).toMatch(/^good {2}/m);
    const json = await runCliInProcess(['list', '--store', store(), '--json']);
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as { name: string; error?: string }[];
    expect(rows.map((x) => [x.name, x.error !== undefined])).toEqual([
      ['broken', true],
      ['evil\u001b[2J\u001b]0;pwned\u0007', true],
      ['good', false],
    ]);
  });

  it('references never pick such a row: latest is the newest tape tapedeck could have written', async () => {
    const r = await runCliInProcess(['show', 'latest', '--store', store(), '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(ESC);
  });

  it("the viewer's tape list answers 200, the bad rows marked unreadable", async () => {
    const res = await fetch(`${viewerUrl}api/tapes`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { tapes: { name: string; ok: boolean }[] };
    expect(body.tapes.map((t) => [t.name, t.ok])).toEqual([
      ['broken', false],
      [evil, false],
      ['good', true],
    ]);
  });
});
