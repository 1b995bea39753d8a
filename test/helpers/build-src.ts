/**
 * The source, transpiled once per test run for the processes tests start (`tapedeck ...` in test/helpers/cli.ts):
 * the same esbuild transform tsx applies, without tsx's loader in every child (it doubled the CPU of a CLI start,
 * ~0.8 s of ~1.4 s, over hundreds of starts per run). Written beside `src` (ROOT/.test-build-PID/, the depth of
 * `dist`) so that what the code finds by relative path (config/, package.json) is where it looks.
 */
import { build } from 'esbuild';
import { cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PREFIX = '.test-build-';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    if (statSync(p).isDirectory()) return p === path.join(ROOT, 'src/view/web') ? [] : sources(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Transpile src/ into a fresh ROOT/.test-build-PID/ (removing those of runs that are gone); returns its path. */
export async function buildSource(): Promise<string> {
  for (const f of readdirSync(ROOT)) {
    if (f.startsWith(PREFIX) && !alive(Number(f.slice(PREFIX.length)))) rmSync(path.join(ROOT, f), { recursive: true, force: true });
  }
  const out = path.join(ROOT, `${PREFIX}${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  await build({
    entryPoints: sources(path.join(ROOT, 'src')),
    outdir: out,
    outbase: path.join(ROOT, 'src'),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
  });
  cpSync(path.join(ROOT, 'src/view/web'), path.join(out, 'view/web'), { recursive: true });
  return out;
}

export function removeBuild(out: string): void {
  rmSync(out, { recursive: true, force: true });
}
