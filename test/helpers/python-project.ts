/**
 * A Python-only project that uses pytest-tapedeck, as the packaging tests build it: one test making one chat
 * completion with the standard library through the plugin's `tapedeck` fixture, and a venv that sees the system's
 * pytest and pip with the plugin pip-installed into it offline (from a source folder or a wheel folder).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { run, type RunResult } from './child-run.js';

/** python3 with pytest, pip and venv (.ci/run installs pytest); without them the Python cases skip. */
export const HAS_PYTHON = spawnSync('python3', ['-c', 'import pytest, pip, venv'], { stdio: 'ignore' }).status === 0;

/** The project's test: asks "celsius" and expects the scripted upstream's `echo: celsius`. */
export function celsiusTest(apiKey: string): string {
  return `
import json
import urllib.request

def test_celsius(tapedeck):
    body = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "celsius"}]}).encode()
    req = urllib.request.Request(
        tapedeck.env["OPENAI_BASE_URL"] + "/chat/completions",
        data=body,
        headers={"content-type": "application/json", "authorization": "Bearer ${apiKey}"},
    )
    with urllib.request.urlopen(req) as res:
        assert json.load(res)["choices"][0]["message"]["content"] == "echo: celsius"
`;
}

/** Write the project into `dir` (its `tests/test_agent.py`; `pyproject` when given). */
export function writeCelsiusProject(dir: string, apiKey: string, pyproject?: string): void {
  mkdirSync(path.join(dir, 'tests'), { recursive: true });
  if (pyproject !== undefined) writeFileSync(path.join(dir, 'pyproject.toml'), pyproject);
  writeFileSync(path.join(dir, 'tests/test_agent.py'), celsiusTest(apiKey));
}

/**
 * A venv at `venv` that sees the system's pytest and pip, with the plugin installed by `pip install --no-index
 * ...installArgs`; `made` or `pip` says what failed when one did.
 */
export async function pluginVenv(
  venv: string,
  installArgs: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ python: string; bin: string; made: RunResult; pip?: RunResult }> {
  const bin = path.join(venv, 'bin');
  const python = path.join(bin, 'python');
  const made = await run('python3', ['-m', 'venv', '--without-pip', '--system-site-packages', venv], opts);
  if (made.code !== 0) return { python, bin, made };
  const pip = await run(python, ['-m', 'pip', 'install', '--no-index', ...installArgs], opts);
  return { python, bin, made, pip };
}
