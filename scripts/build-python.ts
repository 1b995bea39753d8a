/**
 * `npm run build:python`: the pytest plugin's wheels in `release/python/`. The pure one (`py3-none-any`, the plugin
 * running tapedeck as it finds it: TAPEDECK_COMMAND, node_modules, the PATH, npx) and the one for this platform,
 * which carries this platform's single executable (`npm run build:exe`, built here if `release/` has none) and runs it
 * first: no Node.js needed. The wheels are made by the plugin's own build backend
 * (python/pytest-tapedeck/_build/backend.py, standard library only); this script finds the executable and the
 * platform's wheel tag, read from the executable itself:
 *
 * - Linux: `manylinux_2_N_<arch>`, N the newest glibc symbol version the executable needs (`GLIBC_2.28` for the
 *   Node.js builds of today); a musl build (no glibc symbols) is `musllinux_1_2_<arch>`;
 * - macOS: `macosx_<major>_<minor>_<arch>` from the Mach-O's minimum OS (LC_BUILD_VERSION); from macOS 11 on pip
 *   matches major versions only, so a minimum of 13.5 is tagged 14.0 (never a system it cannot start on);
 * - Windows: `win_amd64`, `win_arm64`.
 *
 *   node --import tsx scripts/build-python.ts [--executable FILE] [--out DIR]     (npm run build:python)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildExecutable, executableName } from './build-exe.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const BACKEND = path.join(ROOT, 'python/pytest-tapedeck/_build/backend.py');

const LINUX_ARCH: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64' };
const MAC_ARCH: Record<string, string> = { x64: 'x86_64', arm64: 'arm64' };
const WIN_ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };

/** The newest `GLIBC_2.N` an ELF executable names (its symbol versions), or null (none: not a glibc build). */
export function glibcNeeded(exe: Buffer): number | null {
  let newest: number | null = null;
  const text = exe.toString('latin1');
  for (const m of text.matchAll(/GLIBC_2\.(\d+)(?![\d.])/g)) newest = Math.max(newest ?? 0, Number(m[1]));
  return newest;
}

/** The minimum macOS version a 64-bit Mach-O executable names (LC_BUILD_VERSION, or LC_VERSION_MIN_MACOSX). */
export function macosMinimum(exe: Buffer): [number, number] | null {
  if (exe.length < 32 || exe.readUInt32LE(0) !== 0xfeedfacf) return null;
  const ncmds = exe.readUInt32LE(16);
  let at = 32;
  for (let i = 0; i < ncmds && at + 16 <= exe.length; i++) {
    const cmd = exe.readUInt32LE(at);
    const size = exe.readUInt32LE(at + 4);
    const version = cmd === 0x32 ? exe.readUInt32LE(at + 12) : cmd === 0x24 ? exe.readUInt32LE(at + 8) : null;
    if (version !== null) return [version >>> 16, (version >>> 8) & 0xff];
    if (size === 0) break;
    at += size;
  }
  return null;
}

/** The platform wheel's tag (`py3-none-...`) for an executable built for `platform`/`arch`. */
export function wheelTag(exe: Buffer, platform: string = process.platform, arch: string = process.arch): string {
  const unknown = (): Error => new Error(`build:python: no wheel tag for a ${platform}-${arch} executable`);
  if (platform === 'linux') {
    const cpu = LINUX_ARCH[arch];
    if (cpu === undefined) throw unknown();
    const glibc = glibcNeeded(exe);
    return `py3-none-${glibc === null ? `musllinux_1_2_${cpu}` : `manylinux_2_${glibc}_${cpu}`}`;
  }
  if (platform === 'darwin') {
    const cpu = MAC_ARCH[arch];
    const min = macosMinimum(exe);
    if (cpu === undefined || min === null) throw unknown();
    const [major, minor] = min;
    return `py3-none-${major >= 11 ? `macosx_${minor > 0 ? major + 1 : major}_0` : `macosx_${major}_${minor}`}_${cpu}`;
  }
  if (platform === 'win32' && WIN_ARCH[arch] !== undefined) return `py3-none-win_${WIN_ARCH[arch]}`;
  throw unknown();
}

/** Build the wheels into `out` (default release/python/); returns the output of the backend (one line per wheel). */
export async function buildPythonWheels(opts: { executable?: string; out?: string } = {}): Promise<string> {
  let exe = opts.executable ?? path.join(ROOT, 'release', executableName());
  if (opts.executable === undefined && !existsSync(exe)) exe = (await buildExecutable()).file;
  const out = opts.out ?? path.join(ROOT, 'release/python');
  const tag = wheelTag(readFileSync(exe));
  const python = process.env.PYTHON ?? (process.platform === 'win32' ? 'python' : 'python3');
  return execFileSync(python, [BACKEND, 'release', '--out', out, '--executable', exe, '--tag', tag], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const flag = (name: string): string | undefined => {
    const at = process.argv.indexOf(name);
    return at === -1 ? undefined : process.argv[at + 1];
  };
  const executable = flag('--executable');
  const out = flag('--out');
  buildPythonWheels({
    ...(executable === undefined ? {} : { executable: path.resolve(executable) }),
    ...(out === undefined ? {} : { out: path.resolve(out) }),
  }).then(
    (said) => process.stdout.write(said),
    (err: unknown) => {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}
