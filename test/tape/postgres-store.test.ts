/**
 * The PostgreSQL store in process, on the throwaway cluster: what the contract suite does not cover. A newer schema
 * is refused with an upgrade line; namespaces keep tapes apart; the indexed columns hold what people filter on; the
 * viewer follows a tape that another store (another machine) is writing, through LISTEN/NOTIFY.
 */
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { openTapeSession } from '../../src/engine/tape-session.js';
import { createPgStore } from '../../src/tape/stores/postgres/pg-store.js';
import { startViewer } from '../../src/view/viewer.js';
import { llmCall, toolCall } from '../view/synthetic-tape.js';
import { newExchange } from './store-contract.js';

const pgUrl = inject('pgUrl');
const d = pgUrl === null ? describe.skip : describe;
const ns = (what: string): string => `${what}-${process.pid}`;

d('PostgreSQL store', () => {
  it('keeps namespaces apart and fills the indexed columns (model, tools, exact key, match kind)', async () => {
    const a = await createPgStore(pgUrl as string, { namespace: ns('team-a') });
    const b = await createPgStore(`${pgUrl as string}?namespace=${ns('team-b')}`);
    try {
      const { writer } = await openTapeSession({ mode: 'record', store: a, tape: 'same-name', routes: [] });
      await writer.append(newExchange({ model: 'gpt-4.1-mini', tool: 'send_email' }));
      await writer.append(newExchange({ mcpTool: 'search' }));
      await writer.close();
      expect(await a.has('same-name')).toBe(true);
      expect(await b.has('same-name')).toBe(false);
      expect(b.location).toContain(`namespace ${ns('team-b')}`);
      const client = new pg.Client(pgUrl as string);
      await client.connect();
      try {
        const rows = (
          await client.query(
            `SELECT e.model, e.tools, e.tool_name, e.exact_key, e.route FROM tapedeck_exchanges e JOIN tapedeck_tapes t ON t.id = e.tape_id
              WHERE t.namespace = $1 ORDER BY e.seq`,
            [ns('team-a')],
          )
        ).rows;
        expect(rows[0]).toMatchObject({ model: 'gpt-4.1-mini', tools: ['send_email'], tool_name: null, route: '/openai' });
        expect(rows[1]).toMatchObject({ model: null, tools: ['search'], tool_name: 'search', route: '/everything/mcp' });
        expect(rows[0].exact_key).toMatch(/^[0-9a-f]{64}$/);
        // "Which runs called send_email, on which model?" across the store, in SQL.
        const q = await client.query(
          `SELECT DISTINCT t.name, e.model FROM tapedeck_exchanges e JOIN tapedeck_tapes t ON t.id = e.tape_id
            WHERE t.namespace = $1 AND e.tools @> ARRAY['send_email']`,
          [ns('team-a')],
        );
        expect(q.rows).toEqual([{ name: 'same-name', model: 'gpt-4.1-mini' }]);
      } finally {
        await client.end();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('indexes exchanges by the key replay matches with (the configured ignored fields)', async () => {
    const store = await createPgStore(pgUrl as string, { namespace: ns('keyed') });
    try {
      const keyOptions = { ignoreFields: ['metadata.run'] };
      const { writer } = await openTapeSession({ mode: 'record', store, tape: 'keyed', routes: [], keyOptions });
      for (const run of ['a1', 'b2'])
        await writer.append(
          newExchange({ body: { model: 'm', metadata: { run }, messages: [{ role: 'user', content: 'same question' }] } }),
        );
      await writer.close();
      const client = new pg.Client(pgUrl as string);
      await client.connect();
      try {
        const { rows } = await client.query<{ exact_key: string }>(
          `SELECT e.exact_key FROM tapedeck_exchanges e JOIN tapedeck_tapes t ON t.id = e.tape_id WHERE t.namespace = $1 ORDER BY e.seq`,
          [ns('keyed')],
        );
        expect(rows).toHaveLength(2);
        // The run id differs; the configured key leaves it out, so both are "the same request", as replay sees them.
        expect(rows[0]?.exact_key).toBe(rows[1]?.exact_key);
      } finally {
        await client.end();
      }
    } finally {
      await store.close();
    }
  });

  it('refuses a database at a newer schema version with an upgrade line', async () => {
    const db = `newer_${process.pid}`;
    const admin = new pg.Client(pgUrl as string);
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${db}`);
      const url = (pgUrl as string).replace(/\/postgres$/, `/${db}`);
      const first = await createPgStore(url);
      await first.close();
      const direct = new pg.Client(url);
      await direct.connect();
      await direct.query('INSERT INTO tapedeck_schema (version) VALUES (99)');
      await direct.end();
      await expect(createPgStore(url)).rejects.toMatchObject({
        code: 'STORE_SCHEMA_UNSUPPORTED',
        message: expect.stringMatching(
          /is at schema version 99, written by a newer tapedeck; this tapedeck \(.*\) knows version 1: upgrade tapedeck$/,
        ) as unknown,
      });
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('the viewer follows a tape another machine is recording into the store (LISTEN/NOTIFY)', async () => {
    const viewing = await createPgStore(pgUrl as string, { namespace: ns('live') });
    const recording = await createPgStore(pgUrl as string, { namespace: ns('live') });
    const writer = await recording.openWriter({ name: 'growing', header: { mode: 'record', routes: [] } });
    await writer.append(llmCall(0));
    const viewer = await startViewer({ store: viewing, port: 0, log: createLogger('silent') });
    const abort = new AbortController();
    try {
      const list = (await fetch(`${viewer.url}api/tapes`).then((r) => r.json())) as { dir: string; tapes: { name: string }[] };
      expect(list.tapes.map((t) => t.name)).toEqual(['growing']);
      expect(list.dir).toContain('postgres://');
      const res = await fetch(`${viewer.url}api/live?name=growing`, { signal: abort.signal });
      const reader = res.body!.getReader();
      const updates: { total: number }[] = [];
      const read = (async () => {
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buf += Buffer.from(value).toString();
          for (const m of buf.matchAll(/data: (.*)\n\n/g)) updates.push(JSON.parse(m[1]!) as { total: number });
          buf = buf.slice(buf.lastIndexOf('\n\n') + 2);
          if (updates.some((u) => u.total === 3)) return;
        }
      })();
      await new Promise((r) => setTimeout(r, 200));
      await writer.append(llmCall(20));
      await writer.append(toolCall(30));
      await Promise.race([read, new Promise((_, rej) => setTimeout(() => rej(new Error(`no update: ${JSON.stringify(updates)}`)), 5000))]);
      expect(updates[0]!.total).toBe(1);
      expect(updates.at(-1)!.total).toBe(3);
    } finally {
      abort.abort();
      await viewer.close();
      await writer.close();
      await viewing.close();
      await recording.close();
    }
  });
});
