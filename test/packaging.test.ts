/**
 * The package as a user gets it: `npm pack` of a fresh copy of the clone whose `dist/` its `prepare` built (the copy
 * the documentation walkthroughs run in, built once per run: test/readme/walkthrough-clone.ts; packing it runs no second
 * build), install the tarball into an empty project, run the `tapedeck` bin and import the library there.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, inject, it } from 'vitest';
import { walkthroughClone } from './readme/walkthrough-clone.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(cmd: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  const res = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${res.status}:\n${res.stdout}\n${res.stderr}`);
  return res;
}

it('npm pack makes a package that installs into another project and runs there', { timeout: 300_000 }, async () => {
  // Packing and publishing build first: `prepare` (which the clone's first npx ran) is the build.
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  expect(manifest.scripts.prepare).toBe('npm run build');
  const clone = await walkthroughClone(inject('walkthroughClone'));
  const tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-pack-'));
  try {
    run(NPM, ['pack', '--silent', '--ignore-scripts', '--pack-destination', tmp], clone);
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
