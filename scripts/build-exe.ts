/**
 * `npm run build:exe`: one self-contained executable of the CLI for this platform and architecture,
 * `release/tapedeck-<platform>-<arch>` (`.exe` on Windows), made with Node's single executable applications from the
 * Node that runs this script: nothing is downloaded.
 *
 * 1. esbuild bundles src/cli/main.ts and every dependency into one CommonJS file (a single executable runs one
 *    script, whose `require` loads Node's built-ins only). Any bundler warning fails the build, except the
 *    `import.meta` uses that run only outside the executable (IMPORT_META_OK).
 * 2. The files tapedeck ships beside its code (src/shipped.ts: package.json, config/*.yaml, the viewer's web/ folder)
 *    become the executable's assets, with an index of their names.
 * 3. `node --experimental-sea-config` makes the blob; postject injects it into a copy of this Node (on macOS the
 *    copy's signature is removed first and an ad-hoc one made after: a release signs it for real).
 *
 * The same sources and the same Node give the same bytes, wherever the checkout is. `--code-cache` adds V8's code
 * cache to the blob: a start takes about half the CPU (`--version`: 0.12 s rather than 0.23 s on Linux x64), but its
 * bytes differ from build to build, so it is left out by default. The size is mostly Node's own (94 MiB of 99 MiB on
 * Linux x64; tapedeck itself is ~5 MiB).
 *
 *   node --import tsx scripts/build-exe.ts [--out DIR] [--json] [--code-cache]
 *   (npm run build:exe; --json: what was built, as JSON)
 */
import { build, type Message } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'postject';
import { SHIPPED_FILES, SHIPPED_FOLDERS, SHIPPED_INDEX } from '../src/shipped.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CODE = path.join(ROOT, 'src');
/** The fuse Node's binary carries for its single-executable blob (the same in every Node that has one). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** Modules a dependency requires inside a try (optional native add-ons): left out, their fallback runs. */
const OPTIONAL = ['pg-native', 'bufferutil', 'utf-8-validate'];
/** The files whose `import.meta` runs only outside the executable (each checks `insideExecutable()` first). */
const IMPORT_META_OK = ['src/shipped.ts', 'src/run/sandbox.ts', 'src/front/ca.ts'];

export interface BuiltExecutable {
  file: string;
  bytes: number;
  sha256: string;
  /** The blob's size: the bundled CLI and the shipped files (the rest is Node's own binary). */
  blobBytes: number;
}

/** Why this Node cannot make a single executable (a distribution's build without the fuse), or null. */
export function cannotBuildWith(node: string = process.execPath): string | null {
  if (readFileSync(node).includes(SEA_FUSE)) return null;
  return `this Node (${node}) has no single-executable support (a distribution's own build?): build with a Node.js release build`;
}

/** `tapedeck-<platform>-<arch>`, `.exe` on Windows: the executable's name for this machine. */
export function executableName(platform: string = process.platform, arch: string = process.arch): string {
  return `tapedeck-${platform}-${arch}${platform === 'win32' ? '.exe' : ''}`;
}

/** Every shipped name (src/shipped.ts), folders listed now. */
function shippedNames(): string[] {
  const names: string[] = [...SHIPPED_FILES];
  for (const folder of SHIPPED_FOLDERS) {
    for (const f of readdirSync(path.join(CODE, folder)).sort()) {
      if (statSync(path.join(CODE, folder, f)).isFile()) names.push(`${folder}${f}`);
    }
  }
  return names;
}

function unexpected(warnings: Message[]): Message[] {
  return warnings.filter((w) => !(w.id === 'empty-import-meta' && IMPORT_META_OK.includes(w.location?.file ?? '')));
}

/** The CLI and its dependencies as one CommonJS file. */
async function bundle(file: string): Promise<void> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['src/cli/main.ts'],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${process.versions.node.split('.')[0]}`,
    external: OPTIONAL,
    legalComments: 'eof',
    // Paths in the bundle's comments stay the checkout's own (node_modules/...), wherever a linked node_modules points.
    preserveSymlinks: true,
    logLevel: 'silent',
    // The package's own version is read from package.json (an asset), the same at every build.
    banner: { js: '// tapedeck: the CLI bundled for a single executable (scripts/build-exe.ts)' },
  });
  const bad = unexpected(result.warnings);
  if (bad.length > 0) {
    const lines = bad.map((w) => `${w.location ? `${w.location.file}:${w.location.line}: ` : ''}${w.text}`);
    throw new Error(`build:exe: the bundle has warnings that would break the executable:\n  ${lines.join('\n  ')}`);
  }
}

/**
 * The blob: the bundle and the assets, by `node --experimental-sea-config`. The blob keeps the main script's path as
 * the config names it: a name relative to the work folder, the same at every build.
 */
function blob(work: string, main: string, codeCache: boolean): string {
  const assets: Record<string, string> = {};
  for (const name of shippedNames()) assets[name] = path.resolve(CODE, name);
  const index = path.join(work, 'shipped.json');
  writeFileSync(index, JSON.stringify(Object.keys(assets)));
  assets[SHIPPED_INDEX] = index;
  const out = path.join(work, 'sea.blob');
  const config = path.join(work, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify(
      {
        main: path.basename(main),
        output: path.basename(out),
        disableExperimentalSEAWarning: true,
        useSnapshot: false,
        useCodeCache: codeCache,
        assets,
      },
      null,
      2,
    ),
  );
  execFileSync(process.execPath, ['--experimental-sea-config', config], { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] });
  return out;
}

/** Build the executable into `outDir` (default release/); returns where it is, its size and its SHA-256. */
export async function buildExecutable(outDir: string = path.join(ROOT, 'release'), codeCache = false): Promise<BuiltExecutable> {
  const why = cannotBuildWith();
  if (why !== null) throw new Error(`build:exe: ${why}`);
  mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, executableName());
  const work = path.join(outDir, `.build-${process.pid}`);
  let blobBytes = 0;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const main = path.join(work, 'tapedeck.cjs');
    await bundle(main);
    const data = readFileSync(blob(work, main, codeCache));
    blobBytes = data.length;
    const staged = path.join(work, executableName());
    copyFileSync(process.execPath, staged);
    chmodSync(staged, 0o755);
    const mac = process.platform === 'darwin';
    if (mac) execFileSync('codesign', ['--remove-signature', staged]);
    await inject(staged, 'NODE_SEA_BLOB', data, { sentinelFuse: SEA_FUSE, ...(mac ? { machoSegmentName: 'NODE_SEA' } : {}) });
    if (mac) execFileSync('codesign', ['--sign', '-', staged]);
    rmSync(file, { force: true });
    copyFileSync(staged, file);
    chmodSync(file, 0o755);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const bytes = readFileSync(file);
  return { file, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), blobBytes };
}

function mib(n: number): string {
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const at = process.argv.indexOf('--out');
  const out = at === -1 ? undefined : process.argv[at + 1];
  const codeCache = process.argv.includes('--code-cache');
  buildExecutable(out === undefined ? undefined : path.resolve(out), codeCache).then(
    (built) => {
      if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(built)}\n`);
      else
        process.stdout.write(
          `${path.relative(process.cwd(), built.file)}: ${mib(built.bytes)} (${built.bytes} bytes; tapedeck ${mib(built.blobBytes)}, ` +
            `the rest is Node.js ${process.version}), sha256 ${built.sha256}${codeCache ? ' (with a code cache: not reproducible)' : ''}\n`,
        );
    },
    (err: unknown) => {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}
