/**
 * The README walkthroughs run in groups, one test file each (walkthrough-run.ts): none may fall between them, and
 * none the README is meant to keep may lose its marker (it would silently stop being tested).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { readmeWalkthroughs, WALKTHROUGH_GROUPS } from './walkthrough-run.js';

/** The walkthroughs the README must keep. */
const EXPECTED = [
  'kit',
  'stdio',
  'side-effects',
  'modified-replay',
  'forks',
  'experiment',
  'compare',
  'ci',
  'ci-markdown',
  'drift',
  'inspect',
  'export',
];

it('finds every walkthrough the README is meant to have', () => {
  expect(readmeWalkthroughs().map((w) => w.name)).toEqual(expect.arrayContaining(EXPECTED));
});

it('runs every walkthrough of the README in exactly one group, each group in its own test file', () => {
  const grouped: string[] = Object.values(WALKTHROUGH_GROUPS).flat();
  expect([...grouped].sort()).toEqual(
    readmeWalkthroughs()
      .map((w) => w.name)
      .sort(),
  );
  expect(new Set(grouped).size).toBe(grouped.length);
  for (const group of Object.keys(WALKTHROUGH_GROUPS))
    expect(existsSync(path.join(import.meta.dirname, `walkthroughs-${group}.test.ts`)), group).toBe(true);
});
