/**
 * The vitest helper's suite features under a real vitest run (the project in `suite-fixture/`, one serve for the run
 * through the global setup, options from the environment): faults with a plan per test, `TAPEDECK_EXPECT` failing
 * the test that stopped making a call (in diff's words), orphan tapes listed after a complete run and deleted only
 * then, `TAPEDECK_RERECORD` re-recording one test while the rest replay, and `TAPEDECK_MAX_AGE`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = path.join(ROOT, 'test/vitest/suite-fixture');

const CELSIUS = 'suite.fixture/weather/answers-in-celsius';
const FAHRENHEIT = 'suite.fixture/weather/answers-in-fahrenheit';
const SKIPPED = 'suite.fixture/sometimes-skipped';
const GONE = 'suite.fixture/a-test-since-deleted';

async function runVitest(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--root', FIXTURE, ...args], {
    cwd: FIXTURE,
    env: { ...process.env, TAPEDECK_URL: '', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, out };
}

describe('tapedeck-proxy/vitest: a suite', () => {
  let dir: string;
  let upstream: ScriptedUpstream;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-vitest-suite-'));
    upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
    env = {
      TAPEDECK_DIR: dir,
      TAPEDECK_SERVE_ARGS: `--route /openai=${upstream.url}`,
      TAPEDECK_MODE: 'replay',
      TAPEDECK_EXPECT: '',
      TAPEDECK_FAULTS: '',
      TAPEDECK_RERECORD: '',
      TAPEDECK_MAX_AGE: '',
      TAPEDECK_PRUNE_ORPHANS: '',
      FIXTURE_DROP: '',
      FIXTURE_SKIP: '',
      FIXTURE_FAULTS: '',
    };
  });
  afterAll(async () => {
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'faults per test, --expect, orphans after a complete run only, a test re-recorded while the rest replay, --max-age',
    { timeout: 300_000 },
    async () => {
      const recorded = await runVitest({ ...env, TAPEDECK_MODE: 'auto' });
      expect(recorded.code, recorded.out).toBe(0);
      expect(recorded.out).toMatch(/3 tape\(s\): 3 recorded, 0 replayed/);
      expect(upstream.requests).toHaveLength(4);
      // A tape whose test is gone: an orphan.
      await (await createDirStore(dir).openWriter({ name: GONE, header: { mode: 'record', routes: [] } })).close();

      // Each test's first call is rate-limited (a plan per test); celsius no longer makes its second call; one skipped.
      const faults = path.join(dir, 'faults.yaml');
      writeFileSync(faults, 'faults:\n  - when: { api: openai, call: 1 }\n    then: { status: 429, retryAfter: 0 }\n');
      const contract = await runVitest({
        ...env,
        TAPEDECK_EXPECT: 'llm',
        TAPEDECK_FAULTS: faults,
        FIXTURE_FAULTS: '1',
        FIXTURE_DROP: '1',
        FIXTURE_SKIP: '1',
      });
      expect(contract.code, contract.out).toBe(1);
      expect(contract.out).toMatch(/1 failed \| 1 passed \| 1 skipped/);
      expect(contract.out).toContain(
        `tapedeck --expect: this test's tape "${CELSIUS}":\nunused recordings  1 of 2 expected recorded call(s) never made\n  step 1  LLM gpt-4o-mini`,
      );
      // A complete run (a skipped test is still the run's): the orphan listed, the skipped test's tape not.
      expect(contract.out).toContain(
        `tapedeck: 1 orphan tape(s): no test of this run opened them (TAPEDECK_PRUNE_ORPHANS=1 deletes them)\ntapedeck:   ${GONE}\n`,
      );
      expect(upstream.requests).toHaveLength(4);

      // A partial run (-t) deletes nothing, and says why.
      const partial = await runVitest({ ...env, TAPEDECK_PRUNE_ORPHANS: '1' }, ['-t', 'fahrenheit']);
      expect(partial.code, partial.out).toBe(0);
      expect(partial.out).toContain('tapedeck: orphan tapes not deleted: a partial run (-t /fahrenheit/ filtered the tests)');
      expect(await createDirStore(dir).has(GONE)).toBe(true);
      // So is a run with files left out on the command line (pytest's --ignore): the files the project globs leave them out too.
      const excluded = await runVitest({ ...env, TAPEDECK_PRUNE_ORPHANS: '1', FIXTURE_DROP: '1' }, ['--exclude', 'nothing-is-here/**']);
      expect(excluded.code, excluded.out).toBe(0);
      expect(excluded.out).toContain(
        'tapedeck: orphan tapes not deleted: a partial run (--exclude nothing-is-here/** left test files out)',
      );
      expect(await createDirStore(dir).has(GONE)).toBe(true);

      // TAPEDECK_RERECORD: celsius records afresh (live, overwriting) while the others replay; a complete run prunes.
      const rerecord = await runVitest({
        ...env,
        TAPEDECK_RERECORD: '*celsius*',
        TAPEDECK_PRUNE_ORPHANS: '1',
        FIXTURE_DROP: '1',
        FIXTURE_SKIP: '1',
      });
      expect(rerecord.code, rerecord.out).toBe(0);
      expect(rerecord.out).toMatch(new RegExp(`${CELSIUS}\\s+recorded 1 exchange\\(s\\) \\(afresh: --rerecord\\)`));
      expect(rerecord.out).toMatch(new RegExp(`${FAHRENHEIT}\\s+replayed 1, missed 0`));
      expect(rerecord.out).toContain(`tapedeck: deleted 1 orphan tape(s): no test of this run opened them\ntapedeck:   ${GONE}\n`);
      expect(upstream.requests).toHaveLength(5);
      expect((await createDirStore(dir).names()).sort()).toEqual([CELSIUS, FAHRENHEIT, SKIPPED].sort());

      // TAPEDECK_MAX_AGE: an older tape fails its test in replay mode with one line; auto mode records it afresh.
      const file = path.join(dir, `${FAHRENHEIT}.jsonl`);
      const [head, ...rest] = readFileSync(file, 'utf8').split('\n');
      const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
      writeFileSync(file, [head!.replace(/"createdAt":"[^"]+"/, `"createdAt":"${old}"`), ...rest].join('\n'));
      // (celsius was re-recorded with one call: FIXTURE_DROP from here on.)
      const stale = await runVitest({ ...env, TAPEDECK_MAX_AGE: '30d', FIXTURE_DROP: '1' });
      expect(stale.code, stale.out).toBe(1);
      expect(stale.out).toMatch(/1 failed \| 2 passed/);
      expect(stale.out).toContain(
        `tapedeck: tape "${FAHRENHEIT}" is 40 days old (recorded ${old.slice(0, 10)}), older than --max-age 30d: re-record it with TAPEDECK_RERECORD='${FAHRENHEIT}'`,
      );
      const refreshed = await runVitest({ ...env, TAPEDECK_MODE: 'auto', TAPEDECK_MAX_AGE: '30d', FIXTURE_DROP: '1' });
      expect(refreshed.code, refreshed.out).toBe(0);
      expect(refreshed.out).toMatch(new RegExp(`${FAHRENHEIT}\\s+recorded 1 exchange\\(s\\) \\(afresh: older than --max-age\\)`));
      expect(upstream.requests).toHaveLength(6);
    },
  );
});
