import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, inject, it } from 'vitest';
import { readTape } from '../src/tape/tape-reader.js';
import { runCli } from './helpers/cli.js';

it('npm run demo records, replays with the upstream stopped, and finds the answers identical', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-demo-'));
  try {
    const res = spawnSync(process.execPath, [path.join(inject('srcBuild'), 'demo/run-demo.js')], {
      cwd: path.resolve(import.meta.dirname, '..'),
      env: { ...process.env, TAPEDECK_DIR: dir },
      encoding: 'utf8',
    });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    expect(res.stdout).toContain('✓ replay matches the recording: 3 answers identical');
    const replay = await readTape(path.join(dir, 'demo-replay.jsonl'));
    expect(replay.exchanges.map((e) => e.match?.kind)).toEqual(['exact', 'exact', 'exact']);

    // It ends with what to try next, and each tapedeck command it suggests runs (the browser one aside).
    const next = res.stdout.slice(res.stdout.indexOf('next, try:\n'));
    expect(next).toMatch(/^next, try:\n/);
    const commands = next
      .split('\n')
      .slice(1)
      .map((l) => l.split('#')[0]!.trim())
      .filter((c) => c !== '');
    expect(commands).toEqual([
      `npx tapedeck show demo --dir ${dir}`,
      `npx tapedeck show demo --step 0 --dir ${dir}`,
      `npx tapedeck diff demo demo-replay --dir ${dir}`,
      `npx tapedeck view demo --dir ${dir}`,
      'node examples/kit.mjs start',
    ]);
    for (const command of commands.filter((c) => c.startsWith('npx tapedeck') && !c.includes(' view '))) {
      const r = await runCli(command.split(' ').slice(2));
      expect(r.code, `${command}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/demo/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
