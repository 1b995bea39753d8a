/**
 * A package registry on loopback for the tests that install tapedeck the way users do (`npx tapedeck-proxy`,
 * `npm install tapedeck-proxy`): Verdaccio (a dev dependency) in a child process on 127.0.0.1, port 0, with no
 * uplink, so nothing it serves comes from the internet and a package it lacks is a 404. Its storage is seeded with
 * the package's production dependencies as installed here (each packed from `node_modules`, at the versions of the
 * lockfile), so an install from it resolves the whole tree from local data; the package itself is then published
 * to it with `npm publish`, as a maintainer would. `npmEnv` is the environment for npm there: its own user config
 * and cache (so nothing comes from, or goes to, the user's), the registry set.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { run } from './child-run.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface LocalRegistry {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  /** The environment for npm and npx against this registry, with `cache` as npm's cache. */
  npmEnv(cache: string): NodeJS.ProcessEnv;
  /** `npm publish` of a tarball (exits non-zero: rejects with npm's output). */
  publish(tarball: string): Promise<void>;
  close(): Promise<void>;
}

/** A lockfile entry's install path (`node_modules/a/node_modules/@s/b`) to its package name (`@s/b`). */
const nameOf = (installPath: string): string => installPath.slice(installPath.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** The production dependency closure as installed: one install path per name@version (the lockfile's non-dev entries). */
export function productionDependencies(): string[] {
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; dev?: boolean; devOptional?: boolean; link?: boolean }>;
  };
  const seen = new Set<string>();
  const dirs: string[] = [];
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (where === '' || entry.dev === true || entry.devOptional === true || entry.link === true) continue;
    const id = `${nameOf(where)}@${entry.version}`;
    if (seen.has(id)) continue;
    seen.add(id);
    dirs.push(where);
  }
  return dirs;
}

interface Packed {
  name: string;
  version: string;
  filename: string;
  shasum: string;
  integrity: string;
}

/**
 * Verdaccio's storage (`storage/NAME/package.json`, the packument, beside `storage/NAME/FILE.tgz`) holding the
 * production dependencies: packed from `node_modules` by one `npm pack` (no scripts run), packuments written here.
 */
export async function seedStorage(storage: string, scratch: string): Promise<number> {
  const dirs = productionDependencies();
  mkdirSync(scratch, { recursive: true });
  const args = ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch, ...dirs.map((d) => `./${d}`)];
  const res = await run('npm', args, { cwd: ROOT, env: cleanEnv() });
  if (res.code !== 0) throw new Error(`npm pack of the dependencies exited ${res.code}: ${res.stderr}`);
  const packed = JSON.parse(res.stdout) as Packed[];
  const byName = new Map<string, { manifest: Record<string, unknown>; packed: Packed }[]>();
  for (const p of packed) {
    const dir = dirs.find((d) => nameOf(d) === p.name && readManifest(d).version === p.version);
    if (dir === undefined) throw new Error(`npm pack made ${p.name}@${p.version}, which is not in the lockfile`);
    byName.set(p.name, [...(byName.get(p.name) ?? []), { manifest: readManifest(dir), packed: p }]);
  }
  const created = new Date().toISOString();
  for (const [name, versions] of byName) {
    const home = path.join(storage, name);
    mkdirSync(home, { recursive: true });
    const file = (v: string): string => `${name.split('/').pop()}-${v}.tgz`;
    for (const { packed: p } of versions) renameSync(path.join(scratch, p.filename), path.join(home, file(p.version)));
    const latest = versions
      .map((v) => v.packed.version)
      .sort(compareVersions)
      .at(-1) as string;
    const packument = {
      _id: name,
      name,
      'dist-tags': { latest },
      versions: Object.fromEntries(
        versions.map(({ manifest, packed: p }) => [
          p.version,
          {
            ...Object.fromEntries(Object.entries(manifest).filter(([k]) => !k.startsWith('_'))),
            _id: `${name}@${p.version}`,
            dist: { shasum: p.shasum, integrity: p.integrity, tarball: `http://127.0.0.1/${name}/-/${file(p.version)}` },
          },
        ]),
      ),
      time: { created, modified: created, ...Object.fromEntries(versions.map((v) => [v.packed.version, created])) },
      users: {},
      readme: '',
      _attachments: Object.fromEntries(
        versions.map((v) => [file(v.packed.version), { shasum: v.packed.shasum, version: v.packed.version }]),
      ),
      _uplinks: {},
      _distfiles: {},
      _rev: `1-${createHash('md5').update(name).digest('hex')}`,
    };
    writeFileSync(path.join(home, 'package.json'), JSON.stringify(packument, null, 2));
  }
  return packed.length;
}

const readManifest = (dir: string): Record<string, unknown> & { version: string } =>
  JSON.parse(readFileSync(path.join(ROOT, dir, 'package.json'), 'utf8')) as Record<string, unknown> & { version: string };

/** Plain x.y.z ordering (prereleases after their release; enough to pick `latest` among installed versions). */
function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/).map((s) => Number(s));
  const pb = b.split(/[.+-]/).map((s) => Number(s));
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return a.length - b.length;
}

/** The environment without what npm and vitest set for the test run (`npm_*`, a registry or cache of theirs). */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(npm_|VITEST|TAPEDECK_|NODE_OPTIONS$|TSX)/i.test(k) && k !== 'INIT_CWD') env[k] = v;
  return { ...env, NO_COLOR: '1' };
}

/** Verdaccio, listening: `dir` holds its config, storage (seeded before) and user config for npm. */
export async function startLocalRegistry(dir: string, storage: string): Promise<LocalRegistry> {
  const config = path.join(dir, 'verdaccio.yaml');
  // No uplinks: every package is local (seeded or published here). Anyone may read and publish.
  writeFileSync(
    config,
    [
      `storage: ${JSON.stringify(storage)}`,
      `auth: { htpasswd: { file: ${JSON.stringify(path.join(dir, 'htpasswd'))} } }`,
      'uplinks: {}',
      'packages:',
      "  '@*/*': { access: $all, publish: $all }",
      "  '**': { access: $all, publish: $all }",
      'web: { enable: false }',
      'middlewares: { audit: { enabled: false } }',
      'log: { type: stdout, format: json, level: error }',
      '',
    ].join('\n'),
  );
  // runServer gives the http server unstarted: listen on port 0 and say the port on stdout.
  const script = [
    `const { runServer } = require(${JSON.stringify(path.join(ROOT, 'node_modules/verdaccio'))});`,
    `runServer(${JSON.stringify(config)}).then((app) => {`,
    "  const server = app.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port));",
    "  process.on('SIGTERM', () => server.close(() => process.exit(0)));",
    '});',
  ].join('\n');
  const child: ChildProcess = spawn(process.execPath, ['-e', script], {
    cwd: dir,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      const m = /^listening (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`verdaccio exited ${code} before it listened: ${stderr}`)));
  });
  const url = `http://127.0.0.1:${port}/`;
  const userconfig = path.join(dir, 'npmrc');
  // npm publish wants a token for the registry; the registry lets anyone publish, so any token will do.
  writeFileSync(
    userconfig,
    `registry=${url}\n//127.0.0.1:${port}/:_authToken=local-test-token\naudit=false\nfund=false\nupdate-notifier=false\n`,
  );
  const npmEnv = (cache: string): NodeJS.ProcessEnv => ({
    ...cleanEnv(),
    npm_config_userconfig: userconfig,
    npm_config_globalconfig: path.join(dir, 'npmrc-global'),
    npm_config_registry: url,
    npm_config_cache: cache,
  });
  return {
    url,
    npmEnv,
    async publish(tarball) {
      const res = await run('npm', ['publish', tarball], { cwd: dir, env: npmEnv(path.join(dir, 'publish-cache')) });
      if (res.code !== 0) throw new Error(`npm publish exited ${res.code}:\n${res.stdout}\n${res.stderr}`);
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
