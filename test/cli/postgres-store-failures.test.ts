/**
 * The PostgreSQL store when things go wrong, through real tapedeck processes on real PostgreSQL servers: a request
 * holding U+0000 (recorded and replayed byte for byte), a database that stops answering without closing (a
 * loopback relay in front of the run's cluster that stops forwarding), a database stopped mid-replay (a throwaway
 * cluster of the test's own), and a pull whose source holds a damaged body.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { createPgStore } from '../../src/tape/stores/postgres/pg-store.js';
import { newExchange } from '../tape/store-contract.js';
import { spawnCli, waitForListening } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { startFreezableRelay } from '../helpers/freezable-relay.js';
import { startPgCluster } from '../helpers/postgres.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const pgUrl = inject('pgUrl');
const d = pgUrl === null ? describe.skip : describe;
if (pgUrl === null) console.warn(inject('pgNote'));

const ns = `failures-${process.pid}`;
const store = (): string => `${pgUrl as string}?namespace=${ns}`;
let dir: string;
let upstream: ScriptedUpstream;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-pgfail-'));
  upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

type Child = ReturnType<typeof spawnCli>;
const started = new Set<Child>();
/** A tapedeck process whose stderr is kept, ended after the test even when it fails half-way. */
function tapedeck(args: string[]): { child: Child; stderr: () => string; exited: Promise<number | null> } {
  const child = spawnCli(args);
  started.add(child);
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  void exited.then(() => started.delete(child));
  return { child, stderr: () => err, exited };
}
afterEach(() => {
  for (const child of started) child.kill('SIGKILL');
  started.clear();
});

/** POST a chat completion whose JSON body is `body` exactly; the answer's status and text (or `cut`). */
async function post(proxy: string, body: string): Promise<{ status: number | 'cut'; text: string }> {
  try {
    const res = await fetch(`${proxy}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, text: await res.text() };
  } catch {
    return { status: 'cut', text: '' };
  }
}
const chatBody = (content: string): string => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

async function until(what: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

d('U+0000 in a recorded request and answer', () => {
  it('is recorded into PostgreSQL and replayed as recorded; the tape goes on taking exchanges', async () => {
    const rec = tapedeck(['record', '--tape', 'nul', '--store', store(), '--port', '0', '--route', `/openai=${upstream.url}`]);
    const proxy = await waitForListening(rec.child);
    // The JSON text holds the escape \u0000: the prompt holds the character, and the echoed answer too.
    const body = chatBody('before\u0000after');
    expect(body).toContain('\\u0000');
    const live = await post(proxy, body);
    expect(live.status).toBe(200);
    expect(live.text).toContain('before\\u0000after');
    const after = await post(proxy, chatBody('plain'));
    expect(after.status).toBe(200);
    rec.child.kill('SIGINT');
    expect(await rec.exited, rec.stderr()).toBe(0);
    expect(rec.stderr()).toContain('2 exchange(s) on tape "nul"');

    const rep = tapedeck(['replay', '--tape', 'nul', '--store', store(), '--port', '0', '--save-as', 'nul-replay']);
    const rproxy = await waitForListening(rep.child);
    const hits = upstream.requests.length;
    const replayed = await post(rproxy, body);
    expect(replayed.status).toBe(200);
    // The recorded answer as the tape keeps JSON (its text compact, as every replayed JSON answer is), U+0000 included.
    expect(replayed.text).toBe(JSON.stringify(JSON.parse(live.text)));
    expect(replayed.text).toContain('"content":"echo: before\\u0000after"');
    expect(upstream.requests.length).toBe(hits);
    rep.child.kill('SIGINT');
    expect(await rep.exited, rep.stderr()).toBe(0);
    const s = await createPgStore(pgUrl as string, { namespace: ns });
    try {
      const saved = await s.load('nul-replay');
      expect(saved.exchanges[0]?.match?.kind).toBe('exact');
      expect(lastUserText((saved.exchanges[0]?.request.body as { json: unknown }).json)).toBe('before\u0000after');
    } finally {
      await s.close();
    }
  }, 60_000);
});

d('a database that stops answering without closing', () => {
  it('gets a deadline: the request waiting on it ends, later ones get 503, and SIGTERM exits 1 with the count', async () => {
    const relay = await startFreezableRelay({ host: '127.0.0.1', port: Number(new URL(pgUrl as string).port) });
    try {
      const url = `${relay.via(pgUrl as string)}?namespace=${ns}&timeout=1`;
      const rec = tapedeck([
        'record',
        '--tape',
        'frozen',
        '--store',
        url,
        '--port',
        '0',
        '--route',
        `/openai=${upstream.url}`,
        '--shutdown-timeout',
        '2',
      ]);
      const proxy = await waitForListening(rec.child);
      expect((await post(proxy, chatBody('kept'))).status).toBe(200);
      relay.freeze();
      // Its commit gets no answer: cut after the store's timeout (1 s here), never left waiting (the relay never answers).
      const waiting = await post(proxy, chatBody('lost'));
      expect(waiting.status).not.toBe(200);
      await until(() => rec.stderr().includes('nothing more will reach the tape'));
      expect(rec.stderr()).toMatch(/did not answer for 1 s, and the connection was cut/);
      const refused = await post(proxy, chatBody('refused'));
      expect(refused.status).toBe(503);
      rec.child.kill('SIGTERM');
      expect(await rec.exited).toBe(1);
      expect(rec.stderr()).toContain('1 exchange(s) on tape "frozen"');
      expect(rec.stderr()).toContain('the tape is incomplete');
    } finally {
      await relay.close();
    }
  }, 120_000);

  it('does not hold a stop: a commit still waiting at SIGTERM fails the tape within --shutdown-timeout', async () => {
    const relay = await startFreezableRelay({ host: '127.0.0.1', port: Number(new URL(pgUrl as string).port) });
    try {
      // A store timeout far past the test's own: only the stop's bound (--shutdown-timeout 2) can end this at all.
      const url = `${relay.via(pgUrl as string)}?namespace=${ns}&timeout=3600`;
      const rec = tapedeck([
        'record',
        '--tape',
        'frozen-stop',
        '--store',
        url,
        '--port',
        '0',
        '--route',
        `/openai=${upstream.url}`,
        '--shutdown-timeout',
        '2',
      ]);
      const proxy = await waitForListening(rec.child);
      expect((await post(proxy, chatBody('kept'))).status).toBe(200);
      relay.freeze();
      const seen = upstream.requests.length;
      const waiting = post(proxy, chatBody('pending'));
      await until(() => upstream.requests.length > seen);
      await new Promise((r) => setTimeout(r, 300)); // its commit is on its way to the frozen database
      rec.child.kill('SIGTERM');
      expect(await rec.exited).toBe(1);
      expect((await waiting).status).not.toBe(200);
      expect(rec.stderr()).toContain('1 exchange(s) on tape "frozen-stop"');
      expect(rec.stderr()).toMatch(/did not confirm the last exchange\(s\) before the stop's time ran out/);
    } finally {
      await relay.close();
    }
  }, 120_000);
});

d('a database stopped mid-replay', () => {
  /** A cluster of its own with a recorded tape of two questions; resolves with its URL and its stop. */
  async function recorded(): Promise<{ url: string; stop: () => void }> {
    const own = await startPgCluster();
    const rec = tapedeck(['record', '--tape', 'script', '--store', own.url, '--port', '0', '--route', `/openai=${upstream.url}`]);
    const proxy = await waitForListening(rec.child);
    for (const q of ['one', 'two']) expect((await post(proxy, chatBody(q))).status).toBe(200);
    rec.child.kill('SIGINT');
    expect(await rec.exited).toBe(0);
    return { url: own.url, stop: () => own.stop() };
  }

  /** Wait until the replay tape holds `n` exchanges (the replay writes what it served just after serving it). */
  async function kept(url: string, tape: string, n: number): Promise<void> {
    const s = await createPgStore(url);
    try {
      for (let i = 0; i < 200 && (await s.has(tape)) === false; i++) await new Promise((r) => setTimeout(r, 20));
      for (let i = 0; i < 200 && (await s.load(tape)).exchanges.length < n; i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await s.close();
    }
  }

  it('refuses with 503 once the replay tape cannot be written, speaking of the replay tape; exits 1 with its count', async () => {
    const own = await recorded();
    try {
      const rep = tapedeck(['replay', '--tape', 'script', '--store', own.url, '--port', '0', '--save-as', 'script-run']);
      const proxy = await waitForListening(rep.child);
      expect((await post(proxy, chatBody('one'))).status).toBe(200);
      await kept(own.url, 'script-run', 1);
      own.stop();
      await until(() => rep.stderr().includes('nothing more will reach the replay tape'));
      expect(rep.stderr()).toContain('(replay answers 503 from now on, unless whenTapeFails: serve)');
      const refused = await post(proxy, chatBody('two'));
      expect(refused.status).toBe(503);
      expect(refused.text).toContain('the replay tape cannot be written');
      expect(refused.text).not.toMatch(/record answers/);
      rep.child.kill('SIGINT');
      expect(await rep.exited).toBe(1);
      expect(rep.stderr()).toContain('1 exchange(s) on replay tape "script-run"');
      expect(rep.stderr()).toContain('the replay tape is incomplete');
    } finally {
      own.stop();
    }
  }, 90_000);

  it('with whenTapeFails: serve, answers on and says once that the replay tape is incomplete', async () => {
    const own = await recorded();
    const config = path.join(dir, 'serve-unkept.yaml');
    writeFileSync(config, 'whenTapeFails: serve\n');
    try {
      const rep = tapedeck([
        'replay',
        '--tape',
        'script',
        '--store',
        own.url,
        '--port',
        '0',
        '--save-as',
        'script-run',
        '--config',
        config,
      ]);
      const proxy = await waitForListening(rep.child);
      expect((await post(proxy, chatBody('one'))).status).toBe(200);
      await kept(own.url, 'script-run', 1);
      own.stop();
      await until(() => rep.stderr().includes('the replay tape is incomplete from here'));
      for (const q of ['two', 'one']) expect((await post(proxy, chatBody(q))).status).toBe(200);
      rep.child.kill('SIGINT');
      expect(await rep.exited).toBe(1);
      expect(rep.stderr().match(/replay goes on answering \(whenTapeFails: serve\), but the replay tape is incomplete/g)).toHaveLength(1);
      expect(rep.stderr()).toContain('1 exchange(s) on replay tape "script-run"');
    } finally {
      own.stop();
    }
  }, 90_000);
});

d('pull from a store holding a damaged body', () => {
  it('leaves the tape it would replace exactly as it was, and no folder behind', async () => {
    const src = mkdtempSync(path.join(tmpdir(), 'tapedeck-pull-src-'));
    const into = mkdtempSync(path.join(tmpdir(), 'tapedeck-pull-into-'));
    const fresh = mkdtempSync(path.join(tmpdir(), 'tapedeck-pull-fresh-'));
    try {
      const folder = createDirStore(src);
      for (const name of ['big', 'team/big']) {
        const w = await folder.openWriter({ name, header: { mode: 'record', routes: [] }, largeBodyBytes: 64 });
        // Bodies stored apart (side files, blobs in the store); content of this run only (blobs are shared by content).
        await w.append(newExchange({ body: { messages: [{ role: 'user', content: `${process.pid} ${'x'.repeat(500)}` }] } }));
        await w.close();
      }
      for (const name of ['big', 'team/big']) expect((await runCliInProcess(['push', name, '--to', store(), '--dir', src])).code).toBe(0);
      const first = await runCliInProcess(['pull', 'big', '--from', store(), '--dir', into]);
      expect(first.code, first.stderr).toBe(0);
      const snapshot = (): Record<string, string> => {
        const out: Record<string, string> = {};
        const walk = (d: string): void => {
          for (const e of readdirSync(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isDirectory()) {
              out[`${path.relative(into, p)}/`] = '';
              walk(p);
            } else out[path.relative(into, p)] = readFileSync(p, 'utf8');
          }
        };
        walk(into);
        return out;
      };
      const before = snapshot();
      expect(Object.keys(before)).toContain('big.files/');

      const admin = new pg.Client(pgUrl as string);
      await admin.connect();
      try {
        await admin.query(
          `UPDATE tapedeck_blob_chunks SET data = '\\x00'::bytea WHERE blob IN (SELECT r.sha256 FROM tapedeck_blob_refs r
             JOIN tapedeck_tapes t ON t.id = r.tape_id WHERE t.namespace = $1 AND t.name = 'big')`,
          [ns],
        );
      } finally {
        await admin.end();
      }
      const failed = await runCliInProcess(['pull', 'big', '--from', store(), '--dir', into, '--overwrite']);
      expect(failed.code).toBe(1);
      expect(failed.stderr.trim().split('\n')).toHaveLength(1);
      expect(failed.stderr).toMatch(/stored body [0-9a-f]{12}\.\.\. in the store is damaged: size 1 bytes, recorded \d+/);
      expect(snapshot()).toEqual(before);

      // A tape in a sub-folder, into a folder where nothing was: nothing is left, not even the sub-folder.
      const sub = await runCliInProcess(['pull', 'team/big', '--from', store(), '--dir', fresh]);
      expect(sub.code).toBe(1);
      expect(existsSync(path.join(fresh, 'team'))).toBe(false);
      expect(readdirSync(fresh)).toEqual([]);
    } finally {
      for (const f of [src, into, fresh]) rmSync(f, { recursive: true, force: true });
    }
  }, 60_000);
});
