/**
 * Tapes being written and links out of the tape folder (issue 20 #3 and the links item): `rm` and `prune` refuse a
 * tape a running recorder holds, naming its pid, and the recorder's final count is what is on disk; a symbolic
 * link below the folder never makes tapedeck act (list, show, rm, view) outside it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { createLogger } from '../../src/log.js';
import { startViewer } from '../../src/view/viewer.js';
import { spawnCli, waitForListening } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

let dir: string;
let outside: string;
let upstream: ScriptedUpstream;

const header = (name: string): string =>
  JSON.stringify({
    type: 'header',
    format: 1,
    tapedeck: '0.1.0',
    name,
    createdAt: '2020-01-01T00:00:00.000Z',
    mode: 'record',
    routes: [],
  }) + '\n';

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-inuse-'));
  outside = mkdtempSync(path.join(tmpdir(), 'tapedeck-outside-'));
  upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

async function ask(url: string, content: string): Promise<number> {
  const res = await fetch(`${url}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('a tape being recorded', () => {
  it('rm and prune refuse it, naming the recorder; the recorder goes on and its count is what is on disk', async () => {
    const child = spawnCli(['record', '--tape', 'busy', '--dir', dir, '--port', '0', '--route', `/openai=${upstream.url}`]);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const url = await waitForListening(child);
      for (let i = 0; i < 3; i++) expect(await ask(url, `before ${i}`)).toBe(200);
      const rm = await runCliInProcess(['rm', 'busy', '--dir', dir]);
      expect(rm.code).toBe(1);
      expect(rm.stderr.trim()).toBe(
        `tapedeck rm: cannot delete tape "busy": it is being written by pid ${child.pid} on ${(await import('node:os')).hostname()}. ` +
          `Stop that tapedeck first; if none is running, delete ${path.join(dir, 'busy.jsonl.lock')}`,
      );
      const prune = await runCliInProcess(['prune', '--older-than', '0s', '--dir', dir]);
      expect(prune.code).toBe(0);
      expect(prune.stderr).toContain(`skipped busy: cannot delete tape "busy": it is being written by pid ${child.pid}`);
      expect(existsSync(path.join(dir, 'busy.jsonl'))).toBe(true);
      for (let i = 0; i < 3; i++) expect(await ask(url, `after ${i}`)).toBe(200);
    } finally {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    expect(stderr).toContain('6 exchange(s) on tape "busy"');
    expect((await createDirStore(dir).load('busy')).exchanges).toHaveLength(6);
    // Once the recorder is gone, the tape can go.
    const rm = await runCliInProcess(['rm', 'busy', '--dir', dir]);
    expect(rm.code, rm.stderr).toBe(0);
  });

  it('a stale lock (its recorder killed) does not block rm', async () => {
    writeFileSync(path.join(dir, 'stale.jsonl'), header('stale'));
    writeFileSync(
      path.join(dir, 'stale.jsonl.lock'),
      JSON.stringify({ pid: 2 ** 22 - 3, host: (await import('node:os')).hostname(), since: 'x' }),
    );
    const rm = await runCliInProcess(['rm', 'stale', '--dir', dir]);
    expect(rm.code, rm.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'stale.jsonl'))).toBe(false);
    expect(existsSync(path.join(dir, 'stale.jsonl.lock'))).toBe(false);
  });
});

describe('links below the tape folder', () => {
  it('are never followed out of it: list does not show, show / rm refuse, the viewer answers 400', async () => {
    const linked = mkdtempSync(path.join(tmpdir(), 'tapedeck-linkroot-'));
    try {
      writeFileSync(path.join(outside, 'x.jsonl'), header('x'));
      writeFileSync(path.join(outside, 'secret.jsonl'), header('secret'));
      symlinkSync(outside, path.join(linked, 'sub'));
      symlinkSync(path.join(outside, 'secret.jsonl'), path.join(linked, 'alias.jsonl'));
      mkdirSync(path.join(linked, 'real'));
      writeFileSync(path.join(linked, 'real', 'kept.jsonl'), header('real/kept'));

      const list = await runCliInProcess(['list', '--dir', linked, '--json']);
      expect(JSON.parse(list.stdout).map((t: { name: string }) => t.name)).toEqual(['real/kept']);
      for (const args of [
        ['rm', 'sub/x'],
        ['rm', 'alias'],
        ['show', 'sub/x'],
      ]) {
        const r = await runCliInProcess([...args, '--dir', linked]);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr).toMatch(/is reached through a symbolic link .*never acts outside its tape folder/);
      }
      expect(existsSync(path.join(outside, 'x.jsonl'))).toBe(true);
      expect(existsSync(path.join(outside, 'secret.jsonl'))).toBe(true);

      const viewer = await startViewer({ dir: linked, port: 0, log: createLogger('silent') });
      try {
        for (const name of ['sub/x', 'alias']) {
          const r = await fetch(`${viewer.url}api/tape?name=${encodeURIComponent(name)}`);
          expect(r.status, name).toBe(400);
        }
        expect((await fetch(`${viewer.url}api/tape?name=real%2Fkept`)).status).toBe(200);
      } finally {
        await viewer.close();
      }
    } finally {
      rmSync(linked, { recursive: true, force: true });
    }
  });
});
