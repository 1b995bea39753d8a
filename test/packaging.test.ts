/**
 * The package as a user gets it: `npm pack` (which builds `dist/` through `prepare`), install the tarball into an
 * empty project, run the `tapedeck` bin and import the library there.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(cmd: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  const res = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${res.status}:\n${res.stdout}\n${res.stderr}`);
  return res;
}

it('npm pack makes a package that installs into another project and runs there', { timeout: 300_000 }, () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-pack-'));
  try {
    run(NPM, ['pack', '--silent', '--pack-destination', tmp], ROOT);
    const tarball = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();

    const project = path.join(tmp, 'project');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'an-agent', version: '1.0.0', private: true }));
    run(NPM, ['install', '--save-dev', '--prefer-offline', '--no-audit', '--no-fund', path.join(tmp, tarball as string)], project);

    const installed = path.join(project, 'node_modules/tapedeck');
    // What the commands read at run time: the viewer's page and the built-in config and prices.
    for (const file of [
      'dist/cli/main.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/view/web/index.html',
      'config/default.yaml',
      'config/prices.yaml',
    ])
      expect(existsSync(path.join(installed, file)), file).toBe(true);
    expect(existsSync(path.join(installed, 'src')), 'sources stay out of the package').toBe(false);
    // The examples kit runs from the clone (its agent needs the openai SDK, a dev dependency): not shipped.
    expect(existsSync(path.join(installed, 'examples')), 'the examples kit stays in the clone').toBe(false);

    const bin = path.join(project, 'node_modules/.bin', process.platform === 'win32' ? 'tapedeck.cmd' : 'tapedeck');
    const help = run(bin, ['--help'], project);
    expect(help.stdout).toContain('usage: tapedeck COMMAND');
    expect(help.stdout).toContain('record');

    mkdirSync(path.join(project, 'tapes'));
    const list = run(bin, ['list'], project);
    expect(list.stdout.trim()).toBe('no tapes in ./tapes');

    // The library entry point resolves too (`import { ... } from 'tapedeck'`).
    const lib = run(
      process.execPath,
      ['--input-type=module', '-e', "import('tapedeck').then((m) => console.log(typeof m.startProxy))"],
      project,
    );
    expect(lib.stdout.trim()).toBe('function');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
