/**
 * Files a person writes (the config, side-effects and mock files, a price table) are read within bounds: one over
 * 1 MiB, or nested deeper than 128 levels, is refused with one line before any parser holds it; a mock whose header
 * value would break the HTTP answer is refused at load, not at serve time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { nestingOver } from '../../src/config/user-file.js';
import { loadMocks } from '../../src/replay/mocks.js';
import { loadSideEffects } from '../../src/replay/side-effects.js';
import { runCli } from '../helpers/cli.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

let dir: string;
const file = (name: string, text: string): string => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-limits-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('size', () => {
  // A valid YAML mapping just over the limit: every line a key.
  const big = (): string => Array.from({ length: 2 * 1024 * 64 }, (_, i) => `k${i}: ${'x'.repeat(8)}`).join('\n');

  it('a config file over 1 MiB is refused in one line', () => {
    const f = file('big-config.yaml', big());
    expect(() => loadConfig(f)).toThrow(/^config file .*big-config\.yaml is over 1 MiB: refused/);
  });

  it('so are side-effects and mock files', () => {
    const f = file('big-effects.yaml', big());
    expect(() => loadSideEffects(f)).toThrow(/side-effects file .* is over 1 MiB: refused/);
    expect(() => loadMocks(f)).toThrow(/mock file .* is over 1 MiB: refused/);
  });

  it.skipIf(process.platform === 'win32')('a device that never ends (/dev/zero) is refused, not read forever', () => {
    expect(() => loadConfig('/dev/zero')).toThrow(/over 1 MiB/);
  });

  it('the CLI says it in one line', async () => {
    const f = file('big-cli.yaml', big());
    const r = await runCliInProcess(['list', '--config', f, '--dir', dir]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/is over 1 MiB: refused/);
  });
});

describe('time', () => {
  it('a large mapping (50,000 keys, under the limit) parses in linear time, and a duplicate key is still refused', () => {
    const keys = Array.from({ length: 50_000 }, (_, i) => `k${i}: x`);
    const f = file('many-keys.yaml', `tools:\n${keys.map((k) => `  ${k}`).join('\n')}\ndone: true\n`);
    expect(() => loadSideEffects(f)).toThrow(/tools\.k0: Invalid input/);
    const dup = file('dup.yaml', 'tools:\n  write_file: false\n  read_file: true\n  write_file: true\ndone: true\n');
    expect(() => loadSideEffects(dup)).toThrow(
      /^side-effects file .*dup\.yaml is not valid YAML: key "write_file" appears twice in one mapping \(line 4\)$/,
    );
  });
});

describe('nesting', () => {
  it.each([
    ['flow', '['.repeat(3000) + ']'.repeat(3000), true],
    ['flow inside a quoted string', `a: "${'['.repeat(3000)}"`, false],
    ['an apostrophe does not hide what follows', `a: don't\nb: ${'['.repeat(300)}`, true],
    ['block', Array.from({ length: 300 }, (_, i) => `${'  '.repeat(i)}k:`).join('\n'), true],
    ['a normal config', 'routes:\n  /openai: https://api.openai.com\nredact:\n  headers: [x-a, x-b]\n', false],
  ])('%s', (_what, text, deep) => expect(nestingOver(text, 128) !== undefined).toBe(deep));

  it('a file nested thousands of levels deep is refused before the YAML parser sees it', () => {
    const f = file('deep.yaml', `mocks: ${'['.repeat(5000)}${']'.repeat(5000)}\n`);
    expect(() => loadMocks(f)).toThrow(/^mock file .*deep\.yaml nests deeper than 128 levels \(line 1\): refused$/);
  });
});

describe('a mock whose header value holds CR/LF', () => {
  const evil = (): string =>
    file(
      'evil-mock.yaml',
      ['mocks:', '  - route: /payments', '    headers:', '      x-evil: "ok\\r\\nset-cookie: stolen=1"', '    body: {}'].join('\n'),
    );

  it('is refused at load, in one line naming the header', () => {
    expect(() => loadMocks(evil())).toThrow(
      /^bad mock file .*evil-mock\.yaml: mocks\.0\.headers\.x-evil: a header value cannot hold CR, LF or other control characters$/,
    );
  });

  it('replay --mock stops with that line, no stack trace', async () => {
    const r = await runCli(['replay', '--tape', 'none', '--dir', dir, '--mock', evil()]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/mocks\.0\.headers\.x-evil: a header value cannot hold CR, LF/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
