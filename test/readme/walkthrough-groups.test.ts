/**
 * The walkthroughs of the documentation (README.md and docs/*.md) run in groups, one test file each
 * (walkthrough-run.ts): none may fall between them, and none the pages are meant to keep may lose its marker (it
 * would silently stop being tested).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { docWalkthroughs, WALKTHROUGH_GROUPS } from './walkthrough-run.js';

/** The walkthroughs the documentation must keep, and the page each is on. */
const EXPECTED: Record<string, string> = {
  kit: 'README.md',
  stdio: 'docs/mcp.md',
  'side-effects': 'docs/side-effects.md',
  'modified-replay': 'docs/modified-replay.md',
  forks: 'docs/modified-replay.md',
  experiment: 'docs/modified-replay.md',
  compare: 'docs/compare-and-ci.md',
  ci: 'docs/compare-and-ci.md',
  'ci-markdown': 'docs/compare-and-ci.md',
  drift: 'docs/drift.md',
  inspect: 'docs/inspect.md',
  export: 'docs/inspect.md',
  'shared-store': 'docs/shared-store.md',
  websocket: 'docs/websocket.md',
};

it('finds every walkthrough the documentation is meant to have, on its page', () => {
  const found = Object.fromEntries(docWalkthroughs().map((w) => [w.name, w.file]));
  expect(found).toMatchObject(EXPECTED);
});

it('runs every walkthrough of the documentation in exactly one group, each group in its own test file', () => {
  const grouped: string[] = Object.values(WALKTHROUGH_GROUPS).flat();
  expect([...grouped].sort()).toEqual(
    docWalkthroughs()
      .map((w) => w.name)
      .sort(),
  );
  expect(new Set(grouped).size).toBe(grouped.length);
  for (const group of Object.keys(WALKTHROUGH_GROUPS))
    expect(existsSync(path.join(import.meta.dirname, `walkthroughs-${group}.test.ts`)), group).toBe(true);
});
