import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { readTape } from '../src/tape/tape-reader.js';

it('npm run demo records, replays with the upstream stopped, and finds the answers identical', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-demo-'));
  try {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/demo/run-demo.ts'], {
      cwd: path.resolve(import.meta.dirname, '..'),
      env: { ...process.env, TAPEDECK_DIR: dir },
      encoding: 'utf8',
    });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    expect(res.stdout).toContain('✓ replay matches the recording: 3 answers identical');
    const replay = await readTape(path.join(dir, 'demo-replay.jsonl'));
    expect(replay.exchanges.map((e) => e.match?.kind)).toEqual(['exact', 'exact', 'exact']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
