/**
 * `tapedeck show NAME | head -3`: the reader goes away before tapedeck has written everything. tapedeck must finish
 * its work and exit quietly, not crash with EPIPE and a stack trace. The test closes the CLI's stdout before it
 * writes a byte, so every write it makes meets a closed pipe.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawnCli } from '../helpers/cli.js';
import { llmCall, writeTape } from '../view/synthetic-tape.js';

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-pipe-'));
  await writeTape(
    dir,
    'run',
    Array.from({ length: 40 }, (_, i) => llmCall(i * 10, { status: i % 2 === 0 ? 500 : 200 })),
  );
  for (const name of ['old-1', 'old-2']) await writeTape(dir, name, [llmCall(0)]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function withClosedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawnCli([...args, '--dir', dir]);
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stderr };
}

it.each([
  ['show', ['show', 'run', '--errors']],
  ['show (timeline)', ['show', 'run']],
  ['list', ['list']],
])('%s into a pipe closed early exits 0 without a word on stderr', async (_name, args) => {
  const r = await withClosedStdout(args);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
});

it('prune into a pipe closed early still removes every tape it names', async () => {
  // Tapes are aged by their header's createdAt: prune everything written before now.
  const r = await withClosedStdout(['prune', '--older-than', '0s']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  for (const name of ['run', 'old-1', 'old-2']) expect(existsSync(path.join(dir, `${name}.jsonl`)), name).toBe(false);
});
