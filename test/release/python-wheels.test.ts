/**
 * `pip install pytest-tapedeck` with no Node.js: the wheels `npm run build:python` makes (scripts/build-python.ts,
 * from the single executable this run shares with test/release/executable.test.ts), checked by `twine check` where
 * it is installed (.ci/run installs Debian's), installed from their folder into a fresh virtual environment. There,
 * with a PATH that holds no `node`, `npm` or `npx` and TAPEDECK_COMMAND unset, a Python project's pytest test
 * records a chat completion through the plugin in auto mode and replays it in replay mode with the upstream gone;
 * the environment's `tapedeck --version` prints the release's version.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtExecutable, cannotBuild } from '../helpers/built-executable.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { buildPythonWheels } from '../../scripts/build-python.js';
import { run, type RunResult } from '../helpers/child-run.js';
import { HAS_PYTHON, pluginVenv, writeCelsiusProject } from '../helpers/python-project.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const why = cannotBuild();
if (why !== null && process.env.CI === 'true') throw new Error(`CI=true and the single executable cannot be built: ${why}`);
const twine = spawnSync('twine', ['--version'], { stdio: 'ignore' }).status === 0;

describe.skipIf(!HAS_PYTHON || why !== null)('pytest-tapedeck from its wheels, with no Node.js', () => {
  let work: string;
  let wheels: string;
  let upstream: ScriptedUpstream;

  beforeAll(async () => {
    const built = await builtExecutable();
    if (!built.ok) throw new Error(built.reason);
    work = mkdtempSync(path.join(tmpdir(), 'tapedeck-wheels-'));
    wheels = path.join(work, 'wheels');
    await buildPythonWheels({ executable: built.file, out: wheels });
    upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
  }, 600_000);

  afterAll(async () => {
    await upstream?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(
    'installs from the wheel folder; a test records through the plugin in auto mode, replays in replay mode; tapedeck --version',
    { timeout: 300_000 },
    async () => {
      const built = readdirSync(wheels).sort();
      expect(built).toHaveLength(2);
      expect(built[0]).toBe(`pytest_tapedeck-${VERSION}-py3-none-any.whl`);
      expect(built[1]).toMatch(
        new RegExp(`^pytest_tapedeck-${VERSION.replaceAll('.', '\\.')}-py3-none-(manylinux_2_\\d+|musllinux_1_2|macosx_\\d+_\\d+|win)_`),
      );
      if (twine) {
        const check = spawnSync('twine', ['check', '--strict', ...built.map((w) => path.join(wheels, w))], { encoding: 'utf8' });
        expect(check.status, check.stdout + check.stderr).toBe(0);
      } else console.log('twine is not installed: the wheels are not checked with twine check (.ci/run installs it)');

      // A fresh environment that sees the system's pytest and pip; the plugin from the wheel folder alone.
      const venv = await pluginVenv(path.join(work, 'venv'), ['--find-links', wheels, 'pytest-tapedeck'], { cwd: work, env: process.env });
      expect(venv.made.code, venv.made.stderr).toBe(0);
      expect(venv.pip?.code, `${venv.pip?.stdout}${venv.pip?.stderr}`).toBe(0);
      expect(venv.pip?.stdout).toContain(`Successfully installed pytest-tapedeck-${VERSION}`);
      const { bin, python: py } = venv;
      const where = spawnSync(py, ['-c', 'import pytest_tapedeck, os; print(os.path.dirname(pytest_tapedeck.__file__))'], {
        encoding: 'utf8',
      });
      const carried = path.join(where.stdout.trim(), 'bin/tapedeck');
      accessSync(carried, constants.X_OK); // pip kept its execute bit (the zip entry's mode)

      // No Node on the PATH: the environment's bin alone (the interpreter is run by its full path).
      for (const node of ['node', 'npm', 'npx']) expect(existsSync(path.join(bin, node)), node).toBe(false);
      const env: NodeJS.ProcessEnv = { PATH: bin, HOME: path.join(work, 'home'), PYTHONDONTWRITEBYTECODE: '1' };
      const version = await run(path.join(bin, 'tapedeck'), ['--version'], { cwd: work, env });
      expect(version.code, version.stderr).toBe(0);
      expect(version.stdout.trim()).toBe(VERSION);

      const project = path.join(work, 'project');
      writeCelsiusProject(project, 'sk-wheel-SECRET-0123', "[project]\nname = 'agent'\nversion = '0'\n");
      const pytest = (mode: string, route: string): Promise<RunResult> =>
        run(py, ['-m', 'pytest', '-v', '-p', 'no:cacheprovider', '--tapedeck-mode', mode], {
          cwd: project,
          env: { ...env, TAPEDECK_SERVE_ARGS: `--route /openai=${route}` },
        });
      const first = await pytest('auto', upstream.url);
      expect(first.code, first.stdout + first.stderr).toBe(0);
      // -v names the command: the executable the wheel carries.
      expect(first.stdout).toContain(`tapedeck: ${carried} (the executable in this package)`);
      expect(first.stdout).toContain('1 passed');
      expect(first.stdout).toContain('1 tape(s): 1 recorded, 0 replayed');
      expect(upstream.requests).toHaveLength(1);
      const tape = path.join(project, 'tapes/tests/test_agent/test_celsius.jsonl');
      expect(readFileSync(tape, 'utf8')).not.toContain('sk-wheel-SECRET');

      // The upstream gone: its route points at a closed port.
      const second = await pytest('replay', 'http://127.0.0.1:9');
      expect(second.code, second.stdout + second.stderr).toBe(0);
      expect(second.stdout).toContain('1 tape(s): 0 recorded, 1 replayed');
      expect(upstream.requests).toHaveLength(1);
    },
  );
});
if (!HAS_PYTHON) it.skip('python3 with pytest, pip and venv is not installed: the wheel test is skipped', () => undefined);
if (why !== null) it.skip(`the single executable cannot be built here (${why}): the wheel test is skipped`, () => undefined);
