import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { tapeNameForTest } from '../../src/tape/test-tape-name.js';
import { testIdOf, testTapeName } from '../../src/vitest/test-tape-name.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = path.join(ROOT, 'test/vitest/fixture');

/** Run vitest itself on the fixture project; its exit code and output. */
async function runVitest(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--root', FIXTURE], {
    cwd: FIXTURE,
    env: { ...process.env, TAPEDECK_URL: '', ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, out };
}

describe('tapedeck-proxy/vitest', () => {
  let dir: string;
  let upstream: ScriptedUpstream;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-vitest-'));
    upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
  });
  afterAll(async () => {
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names a tape after its file, describe blocks and test, as the server does', () => {
    const file = { name: 'tests/agent.test.ts' };
    const fileTask = { name: 'tests/agent.test.ts', file };
    const suite = { name: 'weather today', suite: fileTask, file };
    expect(testIdOf({ name: 'answers in °C, fast!', suite, file })).toEqual({
      file: 'tests/agent.test.ts',
      names: ['weather today', 'answers in °C, fast!'],
    });
    expect(testTapeName({ name: 'answers in celsius', suite, file })).toBe('tests/agent/weather-today/answers-in-celsius');
    expect(testTapeName({ name: 'answers in °C, fast!', suite, file })).toBe(
      tapeNameForTest({ file: 'tests/agent.test.ts', names: ['weather today', 'answers in °C, fast!'] }),
    );
  });

  it(
    'records each test on its own tape under vitest (one serve for the run), then replays them with the upstream gone (a serve per file)',
    { timeout: 180_000 },
    async () => {
      const first = await runVitest({
        FIXTURE_GLOBAL_SETUP: '1',
        TAPEDECK_DIR: dir,
        TAPEDECK_SERVE_ARGS: `--route /openai=${upstream.url}`,
      });
      expect(first.code, first.out).toBe(0);
      expect(first.out).toMatch(/6 tape\(s\): 6 recorded, 0 replayed/);
      const store = createDirStore(dir);
      const calc = (sum: string): string => tapeNameForTest({ file: 'agent.fixture.ts', names: [`calc[${sum}]`] });
      expect(calc('1+1')).not.toBe(calc('1-1'));
      expect(await store.names()).toEqual(
        [
          'agent.fixture/weather/answers-in-celsius',
          'agent.fixture/weather/answers-in-fahrenheit',
          'agent.fixture/天気/東京の天気',
          'agent.fixture/天気/大阪の天気',
          calc('1+1'),
          calc('1-1'),
        ].sort(),
      );
      expect(upstream.requests).toHaveLength(6);

      const second = await runVitest({ TAPEDECK_DIR: dir, TAPEDECK_SERVE_ARGS: '', FIXTURE_GLOBAL_SETUP: '0' });
      expect(second.code, second.out).toBe(0);
      expect(second.out).toMatch(/6 tape\(s\): 0 recorded, 6 replayed/);
      expect(second.out).not.toMatch(/request\(s\) missed/);
      expect(upstream.requests).toHaveLength(6);
    },
  );
});
