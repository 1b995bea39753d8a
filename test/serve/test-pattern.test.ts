/**
 * `--rerecord` globs (src/serve/test-pattern.ts): the syntax as documented, matched without backtracking. Checked
 * against a regular expression on short names (where backtracking costs nothing), refused in one line when a pattern
 * is too long or expands too wide, and, through a real `tapedeck serve`, the pattern and the 80-underscore test name
 * from the issue that held serve's event loop (every other test's request waited behind it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestPattern, MAX_PATTERN_CHARS } from '../../src/serve/test-pattern.js';
import { spawnCli, waitForListening } from '../helpers/cli.js';

/** The glob as the regular expression it reads as (the reference, as tapedeck matched before: right, but it backtracks). */
function reference(glob: string): RegExp | undefined {
  const escape = (c: string): string => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  let out = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '\\' && i + 1 < glob.length) out += escape(glob[++i] as string);
    else if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '{') {
      depth++;
      out += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      out += ')';
    } else if (c === ',' && depth > 0) out += '|';
    else out += escape(c);
  }
  return depth === 0 ? new RegExp(`^${out}$`, 'su') : undefined;
}

/** A small deterministic generator (mulberry32), so a failure repeats. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every serve a test starts, killed after it (SIGKILL: one whose event loop is held would never take a SIGTERM). */
const started = new Set<ReturnType<typeof spawnCli>>();
function serve(dir: string, args: string[]): ReturnType<typeof spawnCli> {
  const child = spawnCli(['serve', '--dir', dir, '--port', '0', ...args]);
  started.add(child);
  return child;
}
afterEach(() => {
  for (const child of started) child.kill('SIGKILL');
  started.clear();
});

describe('--rerecord globs', () => {
  it('match as the regular expression they read as would, on 3,000 short names and patterns', () => {
    const next = random(39);
    const pick = (s: string): string => s[Math.floor(next() * s.length)] as string;
    const word = (n: number, from: string): string => Array.from({ length: Math.floor(next() * n) }, () => pick(from)).join('');
    for (let i = 0; i < 3000; i++) {
      const parts = Array.from({ length: 1 + Math.floor(next() * 4) }, () =>
        next() < 0.2 ? `{${word(3, 'ab*?')},${word(3, 'ab_*')}}` : word(4, 'ab_*?,}\\'),
      );
      const glob = parts.join('');
      const re = reference(glob);
      if (glob.trim() === '' || re === undefined) continue;
      const name = word(10, 'ab_{},\\');
      expect(createTestPattern([glob]).matches([name]), `${glob} on ${name}`).toBe(re.test(name));
    }
  });

  it('matches whole names, by characters (not UTF-16 units), with escapes and nested braces', () => {
    expect(createTestPattern(['天気/?京']).matches(['天気/東京'])).toBe(true);
    expect(createTestPattern(['*{a,b{c,d}}']).matches(['xbd'])).toBe(true);
    expect(createTestPattern(['*{a,b{c,d}}']).matches(['xb'])).toBe(false);
    expect(createTestPattern(['\\{a\\}*']).matches(['{a}x'])).toBe(true);
    expect(createTestPattern(['a*b*c']).matches(['abc', 'xabc'])).toBe(true);
    expect(createTestPattern(['a*b*c']).matches(['acb'])).toBe(false);
  });

  it('refuse a pattern too long or too wide, in one line', () => {
    expect(() => createTestPattern(['a'.repeat(MAX_PATTERN_CHARS + 1)])).toThrow(
      `--rerecord pattern is ${MAX_PATTERN_CHARS + 1} characters long: at most ${MAX_PATTERN_CHARS}`,
    );
    expect(() => createTestPattern(['{a,b}'.repeat(7)])).toThrow(/has more than 64 alternatives: give fewer, or several patterns$/);
  });

  it('serve refuses such a pattern at start: one line, exit 2', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-glob-'));
    try {
      const child = serve(dir, ['--rerecord', '{a,b}'.repeat(7)]);
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(code).toBe(2);
      expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/has more than 64 alternatives/) as string]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the pattern and the 80-underscore test name from the issue: serve answers that test, and the next one', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-glob-'));
    const child = serve(dir, ['--mode', 'auto', '--rerecord', '*_*_*_*_*_*_*_*_*_*_*_*_zz']);
    try {
      const url = await waitForListening(child);
      const tapeOf = async (name: string): Promise<unknown> =>
        (
          await fetch(
            `${url}/@?${new URLSearchParams([
              ['file', 'tests/test_x.py'],
              ['name', name],
            ]).toString()}`,
          )
        ).json();
      expect(await tapeOf('_'.repeat(80))).toEqual({ tape: `tests/test_x/${'_'.repeat(80)}` });
      expect(await tapeOf('test_next')).toEqual({ tape: 'tests/test_x/test_next' });
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
