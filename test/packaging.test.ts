/**
 * The package as users get it, from a registry: `npm pack` of a copy of this checkout (its `prepack` builds, and
 * leaves the repository's `prepare` out of the packed package.json), published with `npm publish` to a registry on
 * loopback (Verdaccio, no uplink, seeded with the production dependencies: test/helpers/local-registry.ts). Then,
 * against that registry only: `npx tapedeck-proxy` from an empty folder (--help, a record and its replay); an
 * install of the tarball into a project with no install script, where `npx tapedeck`, `npx tapedeck-proxy`, the
 * library and `tapedeck-proxy/vitest` resolve; and a Python-only project (no package.json, no node_modules)
 * whose pytest runs the plugin, pip-installed offline, which starts tapedeck through `npx --yes tapedeck-proxy@VERSION`.
 * One pack, registry and npm cache for the whole file, made once (the build and the dependencies' packing side by
 * side), and three installs of the dependency tree (npx's, the project's, the Python project's npx): ~2 min alone
 * on a two-core machine under load (10), ~3-5 min within the whole suite there.
 */
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from './helpers/child-run.js';
import { cleanEnv, seedStorage, startLocalRegistry, type LocalRegistry } from './helpers/local-registry.js';
import { HAS_PYTHON, pluginVenv, writeCelsiusProject } from './helpers/python-project.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from './helpers/scripted-upstream.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MANIFEST = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  scripts: Record<string, string>;
};
const PACKED_AS = `${MANIFEST.name}@${MANIFEST.version}`;

/** An agent any project could have: one chat completion through OPENAI_BASE_URL (set by tapedeck), its answer printed. */
const AGENT = `
const res = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: 'Bearer sk-registry-SECRET-0123' },
  body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: process.argv[2] }] }),
});
console.log((await res.json()).choices[0].message.content);
`;

/** The PATH without any folder holding a `tapedeck` (a global install): the projects here have none. */
function pathWithoutTapedeck(): string {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => {
      try {
        accessSync(path.join(dir, 'tapedeck'), constants.X_OK);
        return false;
      } catch {
        return true;
      }
    })
    .join(path.delimiter);
}

/** The package specs npx installed into its cache (`CACHE/_npx/HASH/package.json`, `_npx.packages`). */
function npxInstalls(cache: string): string[] {
  const npx = path.join(cache, '_npx');
  return readdirSync(npx).flatMap((dir) => {
    const manifest = path.join(npx, dir, 'package.json');
    if (!existsSync(manifest)) return [];
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { _npx?: { packages?: string[] } })._npx?.packages ?? [];
  });
}

/** A copy of the checkout as a maintainer has it: the files git knows (and new ones), `node_modules` linked. */
function copyCheckout(dest: string): void {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter((f) => f !== '' && existsSync(path.join(ROOT, f)))) {
    mkdirSync(path.dirname(path.join(dest, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(dest, file));
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dest, 'node_modules'), 'dir');
}

describe(`${MANIFEST.name} from a registry on loopback`, () => {
  let work: string;
  let checkout: string;
  let tarball: string;
  let packedFiles: string[];
  let registry: LocalRegistry | undefined;
  let upstream: ScriptedUpstream;
  let npmEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'tapedeck-registry-'));
    checkout = path.join(work, 'checkout');
    copyCheckout(checkout);
    mkdirSync(path.join(work, 'pack'));
    // The pack (its prepack builds) and the registry's dependencies (packed from node_modules), side by side.
    const [packed, seeded] = await Promise.all([
      run('npm', ['pack', '--json', '--pack-destination', path.join(work, 'pack')], { cwd: checkout, env: cleanEnv() }),
      seedStorage(path.join(work, 'registry/storage'), path.join(work, 'registry/scratch')),
    ]);
    if (packed.code !== 0) throw new Error(`npm pack exited ${packed.code}:\n${packed.stderr}`);
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    tarball = path.join(work, 'pack', info!.filename);
    packedFiles = info!.files.map((f) => f.path);
    expect(seeded).toBeGreaterThan(50);
    registry = await startLocalRegistry(path.join(work, 'registry'), path.join(work, 'registry/storage'));
    await registry.publish(tarball);
    // One npm cache for every case, as a user has (the npx installs, by spec, do not share their folders in it).
    npmEnv = { ...registry.npmEnv(path.join(work, 'npm-cache')), PATH: pathWithoutTapedeck() };
    upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
  }, 600_000);

  // Removing the three installed trees, the npm cache and the registry's storage (tens of thousands of files) can take
  // a minute on a busy disk.
  afterAll(async () => {
    await registry?.close();
    await upstream?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 300_000);

  it('packs the built package without the build: prepare stays in the repository, out of the package', async () => {
    // In the repository `prepare` is the build (`npm ci`, the first `npx tapedeck` in a clone).
    expect(MANIFEST.scripts.prepare).toBe('npm run build');
    // The copy's package.json is as it was once packed (postpack puts it back), nothing left beside it.
    expect(readFileSync(path.join(checkout, 'package.json'), 'utf8')).toBe(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(existsSync(path.join(checkout, '.package.json.repo'))).toBe(false);
    // In the checkout itself both names run its own bin (npx finds the name among the package's bins): no registry
    // is asked (the one set is a closed port). --ignore-scripts: `prepare` would build again, built by the pack.
    for (const bin of ['tapedeck', MANIFEST.name]) {
      const env = { ...cleanEnv(), npm_config_registry: 'http://127.0.0.1:9/', npm_config_cache: path.join(work, 'checkout-cache') };
      const version = await run('npx', ['--ignore-scripts', bin, '--version'], { cwd: checkout, env });
      expect(version.code, `npx ${bin} in the checkout: ${version.stderr}`).toBe(0);
      expect(version.stdout.trim()).toContain(MANIFEST.version);
    }

    for (const file of ['dist/cli/main.js', 'dist/index.js', 'dist/index.d.ts', 'dist/vitest/index.js', 'dist/view/web/index.html'])
      expect(packedFiles, file).toContain(file);
    for (const file of ['config/default.yaml', 'config/prices.yaml', 'package.json']) expect(packedFiles, file).toContain(file);
    expect(packedFiles.filter((f) => f.startsWith('src/') || f.startsWith('examples/') || f.startsWith('scripts/'))).toEqual([]);

    // What the registry serves for the version (`npm view`): the packed manifest.
    const packument = (await (await fetch(`${registry!.url}${MANIFEST.name}`)).json()) as {
      versions: Record<string, { bin: Record<string, string>; scripts?: Record<string, string> }>;
    };
    const published = packument.versions[MANIFEST.version]!;
    expect(published.bin).toEqual({ tapedeck: 'dist/cli/main.js', 'tapedeck-proxy': 'dist/cli/main.js' });
    expect(Object.keys(published.scripts ?? {})).not.toContain('prepare');
    expect(Object.keys(published.scripts ?? {})).not.toContain('prepack');
  });

  it('npx tapedeck-proxy runs it from an empty folder: --help, a record and its replay', { timeout: 300_000 }, async () => {
    const empty = path.join(work, 'empty');
    mkdirSync(empty);
    const help = await run('npx', [MANIFEST.name, '--help'], { cwd: empty, env: npmEnv });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('usage: tapedeck COMMAND');
    expect(help.stderr).not.toMatch(/install-scripts|canceled/);

    writeFileSync(path.join(empty, 'agent.mjs'), AGENT);
    const record = await run(
      'npx',
      [
        MANIFEST.name,
        'record',
        '--tape',
        'checkout-bug',
        '--route',
        `/openai=${upstream.url}`,
        '--',
        process.execPath,
        'agent.mjs',
        'celsius',
      ],
      { cwd: empty, env: npmEnv },
    );
    expect(record.code, record.stderr).toBe(0);
    expect(record.stdout).toContain('echo: celsius');
    expect(existsSync(path.join(empty, 'tapes/checkout-bug.jsonl'))).toBe(true);
    const seen = upstream.requests.length;

    const replay = await run(
      'npx',
      [
        MANIFEST.name,
        'replay',
        '--tape',
        'checkout-bug',
        '--route',
        '/openai=http://127.0.0.1:9',
        '--',
        process.execPath,
        'agent.mjs',
        'celsius',
      ],
      { cwd: empty, env: npmEnv },
    );
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain('echo: celsius');
    expect(upstream.requests.length).toBe(seen);
    expect(readFileSync(path.join(empty, 'tapes/checkout-bug.jsonl'), 'utf8')).not.toContain('sk-registry-SECRET');
  });

  it(
    'installs from the tarball into a project with no install script; npx tapedeck, the library and tapedeck-proxy/vitest resolve there',
    { timeout: 300_000 },
    async () => {
      // (An install from the registry is what npx did above: the same tree, no install script either.)
      const project = path.join(work, 'project');
      mkdirSync(project);
      writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'an-agent', version: '1.0.0', private: true }));
      const install = await run('npm', ['install', '--save-dev', tarball], { cwd: project, env: npmEnv });
      expect(install.code, install.stderr).toBe(0);
      // npm 11 names every package with an install script it did not run: a packed `prepare` was one.
      expect(install.stderr).not.toContain('install-scripts');
      expect(install.stderr).not.toContain('prepare');

      const installed = path.join(project, 'node_modules', MANIFEST.name);
      const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
      expect(Object.keys(manifest.scripts ?? {})).not.toContain('prepare');
      expect(existsSync(path.join(installed, 'src')), 'sources stay out of the package').toBe(false);

      for (const bin of ['tapedeck', MANIFEST.name]) {
        const help = await run('npx', [bin, '--help'], { cwd: project, env: npmEnv });
        expect(help.code, `npx ${bin}: ${help.stderr}`).toBe(0);
        expect(help.stdout).toContain('usage: tapedeck COMMAND');
      }
      mkdirSync(path.join(project, 'tapes'));
      const list = await run(path.join(project, 'node_modules/.bin/tapedeck'), ['list'], { cwd: project, env: npmEnv });
      expect(list.stdout.trim()).toBe('no tapes in ./tapes');

      const lib = await run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const m = await import('${MANIFEST.name}'); console.log(typeof m.startProxy, import.meta.resolve('${MANIFEST.name}/vitest').endsWith('/dist/vitest/index.js'))`,
        ],
        { cwd: project, env: npmEnv },
      );
      expect(lib.stdout.trim(), lib.stderr).toBe('function true');
    },
  );

  it.skipIf(!HAS_PYTHON)(
    'pytest runs the plugin in a Python-only project: pip-installed offline, tapedeck through npx --yes tapedeck-proxy@VERSION',
    { timeout: 300_000 },
    async () => {
      const project = path.join(work, 'python-project');
      writeCelsiusProject(project, 'sk-registry-SECRET-0123');
      // A venv that sees the system's pytest and pip; the plugin built and installed with no index at all.
      const venv = await pluginVenv(path.join(work, 'venv'), [path.join(ROOT, 'python/pytest-tapedeck')], { cwd: work, env: cleanEnv() });
      expect(venv.made.code, venv.made.stderr).toBe(0);
      expect(venv.pip?.code, `${venv.pip?.stdout}${venv.pip?.stderr}`).toBe(0);
      const py = venv.python;

      const pytest = (mode: string): Promise<Awaited<ReturnType<typeof run>>> =>
        run(py, ['-m', 'pytest', '-p', 'no:cacheprovider', '--tapedeck-mode', mode], {
          cwd: project,
          env: {
            ...npmEnv,
            TAPEDECK_SERVE_ARGS: `--route /openai=${mode === 'record' ? upstream.url : 'http://127.0.0.1:9'}`,
            PYTHONDONTWRITEBYTECODE: '1',
          },
        });
      const first = await pytest('record');
      expect(first.code, first.stdout + first.stderr).toBe(0);
      expect(first.stdout).toContain('1 passed');
      expect(first.stdout).toContain('1 tape(s): 1 recorded, 0 replayed');
      // The plugin found no tapedeck installed and ran the package through npx (`npx --yes tapedeck-proxy@VERSION`).
      expect(npxInstalls(path.join(work, 'npm-cache'))).toContain(PACKED_AS);
      expect(first.stdout).not.toContain('exited with');
      expect(existsSync(path.join(project, 'tapes/tests/test_agent/test_celsius.jsonl'))).toBe(true);

      const second = await pytest('replay');
      expect(second.code, second.stdout + second.stderr).toBe(0);
      expect(second.stdout).toContain('1 tape(s): 0 recorded, 1 replayed');
      expect(second.stdout).not.toContain('exited with');
      // The project stays a Python one: npx installed tapedeck into its cache, not here.
      expect(existsSync(path.join(project, 'node_modules')) || existsSync(path.join(project, 'package.json'))).toBe(false);
    },
  );
  if (!HAS_PYTHON) it.skip('python3 with pytest and pip is not installed: the Python project case is skipped', () => undefined);
});
