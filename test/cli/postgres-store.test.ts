/**
 * The PostgreSQL store end to end, through real tapedeck processes and the official openai SDK, on a throwaway
 * cluster (test/global-setup.ts): record into the store, replay from it with the upstream gone, every reading
 * command with --store, push / pull round trips, several recorders at once, one writer per tape across processes,
 * kill -9 of a recorder under load, and a database that goes away mid-record. The reading commands after the first
 * of each kind (a list, a push, the one that finds the database gone) run in-process (test/helpers/cli-in-process.ts:
 * the same dispatch, flags and error lines), the first through the real process (it exits: no store left open).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { createPgStore } from '../../src/tape/stores/postgres/pg-store.js';
import { askChat } from '../helpers/ask-chat.js';
import { runCli, spawnCli, waitForListening } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { startPgCluster } from '../helpers/postgres.js';
import { lastUserText, openaiChat, openaiChatStream, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const pgUrl = inject('pgUrl');
const d = pgUrl === null ? describe.skip : describe;
if (pgUrl === null) console.warn(inject('pgNote'));

let dir: string;
let upstream: ScriptedUpstream;
/** A namespace per test file run: the cluster is shared by the whole test run. */
const ns = `cli-${process.pid}`;
const store = (): string => `${pgUrl as string}?namespace=${ns}`;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-pgcli-'));
  upstream = await startScriptedUpstream((req) => {
    const text = lastUserText(req.body);
    return text.startsWith('stream') ? openaiChatStream({ parts: [`${text} `, 'done'] }) : openaiChat({ content: `echo: ${text}` });
  });
});
/** Every process a test starts, ended after it even when the test fails half-way. */
const started = new Set<ReturnType<typeof spawnCli>>();
function spawnTapedeck(args: string[]): ReturnType<typeof spawnCli> {
  const child = spawnCli(args);
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}
afterEach(() => {
  for (const child of started) child.kill('SIGKILL');
  started.clear();
});

afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Ask through tapedeck with the official SDK; resolves with the answer's text. */
async function chat(url: string, content: string): Promise<string> {
  const client = new OpenAI({ baseURL: `${url}/openai/v1`, apiKey: 'sk-test-key-that-never-reaches-a-tape', maxRetries: 0 });
  const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  return r.choices[0]?.message.content ?? '';
}

async function stop(child: ReturnType<typeof spawnCli>): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  child.kill('SIGINT');
  return { code: await exited, stderr };
}

d('tapes in PostgreSQL, through the CLI', () => {
  it('records into the store, replays from it with the upstream gone, and every command reads it like a folder', async () => {
    const rec = spawnTapedeck(['record', '--tape', 'checkout', '--store', store(), '--port', '0', '--route', `/openai=${upstream.url}`]);
    const url = await waitForListening(rec);
    const live = [await chat(url, 'first question'), await chat(url, 'second question')];
    const recorded = await stop(rec);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(recorded.stderr).toMatch(
      /2 exchange\(s\) on tape "checkout" \(postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres \(namespace cli-\d+\)#checkout\)/,
    );

    const hits = upstream.requests.length;
    const rep = spawnTapedeck(['replay', '--tape', 'checkout', '--store', store(), '--port', '0', '--save-as', 'checkout-replay']);
    const rurl = await waitForListening(rep);
    expect([await chat(rurl, 'first question'), await chat(rurl, 'second question')]).toEqual(live);
    expect((await stop(rep)).code).toBe(0);
    expect(upstream.requests.length).toBe(hits); // nothing reached the upstream

    const list = await runCli(['list', '--store', store(), '--json']);
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as { name: string; exchanges: number; replayOf?: { tape: string }; matches?: { exact: number } }[];
    expect(rows.map((r) => r.name)).toEqual(['checkout', 'checkout-replay']);
    expect(rows[1]).toMatchObject({ exchanges: 2, replayOf: { tape: 'checkout' }, matches: { exact: 2 } });
    expect(JSON.parse((await runCliInProcess(['list', '--store', store(), '--mode', 'replay', '--json'])).stdout)).toHaveLength(1);
    expect(
      JSON.parse((await runCliInProcess(['list', '--store', store(), '--model', 'gpt-4o-mini', '--since', '1h', '--json'])).stdout),
    ).toHaveLength(2);
    expect(JSON.parse((await runCliInProcess(['list', '--store', store(), '--model', 'nope', '--json'])).stdout)).toHaveLength(0);

    const show = await runCliInProcess(['show', 'latest', '--store', store(), '--json']);
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ name: 'checkout', steps: [{}, {}] });
    const diff = await runCliInProcess(['diff', 'checkout', 'checkout-replay', '--store', store(), '--fail-on', 'divergence']);
    expect(diff.code, diff.stdout + diff.stderr).toBe(0);
    const cost = await runCliInProcess(['cost', 'checkout', '--store', store(), '--json']);
    expect(cost.code, cost.stderr).toBe(0);
    const har = await runCliInProcess(['export', 'checkout', '--format', 'har', '--store', store()]);
    expect(JSON.parse(har.stdout).log.entries).toHaveLength(2);
    const scan = await runCliInProcess(['scan', '--store', store()]);
    expect(scan.code, scan.stdout).toBe(0);
    expect(scan.stdout).toContain('no credentials found in 2 tape(s)');

    const rm = await runCliInProcess(['rm', 'checkout-replay', '--store', store()]);
    expect(rm.code, rm.stderr).toBe(0);
    const prune = await runCliInProcess(['prune', '--older-than', '0s', '--store', store(), '--dry-run']);
    expect(prune.stdout).toContain('would remove checkout');
  }, 120_000);

  it('push and pull move tapes exactly: the round trip diffs identical; an existing tape needs --overwrite', async () => {
    const rec = spawnTapedeck(['record', '--tape', 'local', '--dir', dir, '--port', '0', '--route', `/openai=${upstream.url}`]);
    const url = await waitForListening(rec);
    await chat(url, 'push me');
    await chat(url, 'and me too');
    expect((await stop(rec)).code).toBe(0);

    const push = await runCli(['push', 'local', '--to', store(), '--dir', dir]);
    expect(push.code, push.stderr).toBe(0);
    expect(push.stdout).toMatch(/^pushed local \(2 exchange\(s\)\) to postgres:/);
    const again = await runCliInProcess(['push', 'local', '--to', store(), '--dir', dir]);
    expect(again.code).toBe(2); // a refusal, like a bad flag: nothing was copied
    expect(again.stderr).toMatch(/"local" already in .*: nothing copied: pass --overwrite to replace it\n$/);
    expect((await runCliInProcess(['push', 'local', '--to', store(), '--dir', dir, '--overwrite'])).code).toBe(0);
    // --store names the store as in every other command (--to is the transfer's own word for it).
    const viaStore = await runCliInProcess(['push', 'local', '--store', store(), '--dir', dir, '--overwrite']);
    expect(viaStore.code, viaStore.stderr).toBe(0);
    expect(viaStore.stdout).toMatch(/^pushed local \(2 exchange\(s\)\) to postgres:/);

    const back = mkdtempSync(path.join(tmpdir(), 'tapedeck-pull-'));
    try {
      const pull = await runCliInProcess(['pull', 'local', '--from', store(), '--dir', back]);
      expect(pull.code, pull.stderr).toBe(0);
      const original = await createDirStore(dir).load('local');
      const copy = await createDirStore(back).load('local');
      expect(copy.header).toEqual(original.header);
      expect(copy.exchanges).toEqual(original.exchanges);
      // Byte for byte: the store keeps each record's text as the folder wrote it.
      expect(readFileSync(path.join(back, 'local.jsonl'), 'utf8')).toBe(readFileSync(path.join(dir, 'local.jsonl'), 'utf8'));
      const diff = await runCliInProcess([
        'diff',
        path.join(dir, 'local.jsonl'),
        path.join(back, 'local.jsonl'),
        '--fail-on',
        'divergence',
      ]);
      expect(diff.code, diff.stdout).toBe(0);
      expect(diff.stdout).toContain('identical');
      // A path to a .jsonl is a tape reference whatever the store: the store's tape against the file on disk, a
      // relative path as a user types it, and --tape / show / cost reading a file with a store configured.
      const file = `.${path.sep}${path.relative(process.cwd(), path.join(back, 'local.jsonl'))}`;
      const mixed = await runCliInProcess(['diff', 'local', file, '--store', store(), '--fail-on', 'divergence']);
      expect(mixed.code, mixed.stdout + mixed.stderr).toBe(0);
      expect(mixed.stdout).toMatch(/^local → local +identical/);
      const shown = await runCliInProcess(['show', '--tape', path.join(back, 'local.jsonl'), '--store', store(), '--json']);
      expect(shown.code, shown.stderr).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ name: 'local', steps: [{}, {}] });
    } finally {
      rmSync(back, { recursive: true, force: true });
    }
  });

  it('4 recorders into one database at once lose nothing; a second recorder on a tape is refused, naming the first', async () => {
    const recorders = Array.from({ length: 4 }, (_, i) =>
      spawnTapedeck(['record', '--tape', `fleet-${i}`, '--store', store(), '--port', '0', '--route', `/openai=${upstream.url}`]),
    );
    const urls = await Promise.all(recorders.map(waitForListening));
    const second = await runCli(['record', '--tape', 'fleet-0', '--store', store(), '--port', '0', '--append']);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/tape "fleet-0" is locked by pid \d+ on \S+ \(since .*\): another tapedeck is writing it/);
    let answered = 0;
    await Promise.all(
      urls.flatMap((url, r) =>
        Array.from({ length: 30 }, (_, i) => askChat(url, `${i % 2 ? 'stream' : 'json'}-fleet-${r}-${i}`, () => void answered++)),
      ),
    );
    expect(answered).toBe(120);
    for (const r of recorders) expect((await stop(r)).code).toBe(0);
    const s = await createPgStore(pgUrl as string, { namespace: ns });
    try {
      for (let r = 0; r < 4; r++) {
        const tape = await s.load(`fleet-${r}`);
        expect(tape.exchanges).toHaveLength(30);
        expect(new Set(tape.exchanges.map((e) => lastUserText((e.request.body as { json: unknown }).json))).size).toBe(30);
      }
    } finally {
      await s.close();
    }
  });

  it('kill -9 of a recorder under 50 concurrent streams: every answer a client completed is in the database (5 rounds)', async () => {
    const s = await createPgStore(pgUrl as string, { namespace: ns });
    try {
      for (let round = 0; round < 5; round++) {
        const tape = `crash-${round}`;
        const child = spawnTapedeck(['record', '--tape', tape, '--store', store(), '--port', '0', '--route', `/openai=${upstream.url}`]);
        const url = await waitForListening(child);
        const exited = new Promise((r) => child.once('exit', r));
        const completed: string[] = [];
        let seen = 0;
        await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            askChat(url, `stream-${round}-${i}`, () => {
              completed.push(`stream-${round}-${i}`);
              // Let a few complete, then kill at once, in the callback that saw the end of an answer.
              if (++seen === 5 + round * 5) child.kill('SIGKILL');
            }),
          ),
        );
        await exited;
        const onTape = (await s.load(tape)).exchanges.map((e) => lastUserText((e.request.body as { json: unknown }).json));
        expect(completed.length, `round ${round}`).toBeGreaterThan(0);
        for (const p of completed) expect(onTape, `round ${round}: ${p} completed but is not in the database`).toContain(p);
      }
    } finally {
      await s.close();
    }
  });
});

d('a database that goes away mid-record', () => {
  it('is loud: one line with what is committed, 503 from then on, exit 1; the password is never printed', async () => {
    const own = await startPgCluster();
    try {
      const url = own.url.replace('postgres@', 'postgres:hunter2secret@');
      const child = spawnTapedeck(['record', '--tape', 'doomed', '--store', url, '--port', '0', '--route', `/openai=${upstream.url}`]);
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const proxy = await waitForListening(child);
      for (let i = 0; i < 3; i++) expect(await chat(proxy, `kept ${i}`)).toBe(`echo: kept ${i}`);
      // The recorder's connection is cut from the server side, as when the database stops.
      const admin = new pg.Client(own.url);
      await admin.connect();
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'tapedeck writer%'`);
      await admin.end();
      // The recorder hears of it from its connection (a request already on its way then is cut, never answered whole
      // without being on the tape); from then on every request is a 503.
      while (!stderr.includes('nothing more will reach the tape')) await new Promise((r) => setTimeout(r, 20));
      const after: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${proxy}/openai/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `lost ${i}` }] }),
        });
        await res.arrayBuffer();
        after.push(res.status);
      }
      expect(after.every((s) => s === 503)).toBe(true);
      const exited = new Promise<number | null>((r) => child.once('exit', r));
      child.kill('SIGINT');
      expect(await exited).toBe(1);
      expect(stderr.match(/nothing more will reach the tape/g)).toHaveLength(1);
      expect(stderr).toMatch(/cannot write tape "doomed" .*It holds the 3 exchange\(s\) committed before this/);
      expect(stderr).toContain('3 exchange(s) on tape "doomed"');
      expect(stderr).not.toContain('hunter2secret');
      expect(stderr).toContain('postgres:***@');
      const s = await createPgStore(own.url);
      try {
        expect((await s.load('doomed')).exchanges).toHaveLength(3);
      } finally {
        await s.close();
      }
      // And a store that cannot be reached at all is one line, password hidden.
      own.stop();
      const gone = await runCli(['list', '--store', url]);
      expect(gone.code).toBe(1);
      expect(gone.stderr.trim().split('\n')).toHaveLength(1);
      expect(gone.stderr).toMatch(/the tape store postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres refused the connection/);
    } finally {
      own.stop();
    }
  });
});
