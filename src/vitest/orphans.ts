/**
 * Orphan tapes at the end of a vitest run (the global setup's teardown): the recordings in serve's folder that no
 * test of the run opened, was given, or has (tests that did not run, skipped or todo, are claimed by name first, so
 * their tapes are no orphans). Listed after a complete run; deleted too with `TAPEDECK_PRUNE_ORPHANS=1`.
 *
 * Complete means: every test file of the project was collected (no file filter, `--exclude`, `--shard`, `--changed`,
 * `--related`, a `--bail` that stopped early), none failed to load, and no `-t` filter. Tests a run skips (`.skip`,
 * `.todo`, `.only` elsewhere, a tags filter) are still in its files, and claimed. Anything else is a partial run, and
 * nothing is listed or deleted, for the tapes of the tests it left out would look like orphans; with
 * `TAPEDECK_PRUNE_ORPHANS=1` a line says why nothing was deleted.
 */
import type { TestProject } from 'vitest/node';
import { testIdOf, type NamedTask } from './test-tape-name.js';

interface TaskLike extends NamedTask {
  type: string;
  tasks?: TaskLike[];
}

interface FileLike extends TaskLike {
  filepath: string;
  projectName?: string | undefined;
  result?: { state?: string; errors?: unknown[] } | undefined;
}

/** Why the run was partial, or undefined when it reached every test of the project. */
export async function partialRun(project: TestProject): Promise<string | undefined> {
  const vitest = project.vitest;
  if (vitest.config.testNamePattern !== undefined) return `-t ${String(vitest.config.testNamePattern)} filtered the tests`;
  // Files left out on the command line are left out of the files the project globs too: only the flag says so.
  const excluded = (vitest.config as { cliExclude?: string[] | undefined }).cliExclude ?? [];
  if (excluded.length > 0) return `--exclude ${excluded.join(' ')} left test files out`;
  const files = filesOf(project);
  const ran = new Set(files.map((f) => f.filepath));
  const all = (await project.globTestFiles()).testFiles;
  const left = all.filter((f) => !ran.has(f));
  if (left.length > 0) return `${all.length - left.length} of ${all.length} test files ran`;
  const broken = files.find((f) => f.result?.state === 'fail' && (f.tasks ?? []).length === 0);
  if (broken !== undefined) return `${broken.name} failed to load`;
  return undefined;
}

/** Every test of the run's files, ran or not, as serve names them. */
export function testsOf(project: TestProject): ReturnType<typeof testIdOf>[] {
  const out: ReturnType<typeof testIdOf>[] = [];
  const walk = (task: TaskLike): void => {
    if (task.type === 'test') out.push(testIdOf(task));
    for (const t of task.tasks ?? []) walk(t);
  };
  for (const f of filesOf(project)) walk(f);
  return out;
}

function filesOf(project: TestProject): FileLike[] {
  const files = project.vitest.state.getFiles() as unknown as FileLike[];
  return files.filter((f) => f.projectName === undefined || f.projectName === project.name);
}

/** Claim the run's tests, then list (or delete) the orphans; the lines to print. */
export async function orphanReport(project: TestProject, serveUrl: string, prune: boolean): Promise<string[]> {
  const partial = await partialRun(project);
  if (partial !== undefined)
    return prune
      ? [`tapedeck: orphan tapes not deleted: a partial run (${partial}); TAPEDECK_PRUNE_ORPHANS deletes after a complete run only`]
      : [];
  const base = serveUrl.replace(/\/+$/, '');
  const claim = await fetch(`${base}/@/tests`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tests: testsOf(project) }),
  });
  if (!claim.ok) return [`tapedeck: orphan tapes not checked: tapedeck serve at ${serveUrl} answered ${claim.status}`];
  if (prune) {
    const res = (await (await fetch(`${base}/@/orphans`, { method: 'DELETE' })).json()) as {
      removed: string[];
      skipped: { name: string; reason: string }[];
    };
    if (res.removed.length === 0 && res.skipped.length === 0) return [];
    return [
      `tapedeck: deleted ${res.removed.length} orphan tape(s): no test of this run opened them`,
      ...res.removed.map((n) => `tapedeck:   ${n}`),
      ...res.skipped.map((s) => `tapedeck:   ${s.name} not deleted: ${s.reason}`),
    ];
  }
  const { orphans } = (await (await fetch(`${base}/@/orphans`)).json()) as { orphans: string[] };
  if (orphans.length === 0) return [];
  return [
    `tapedeck: ${orphans.length} orphan tape(s): no test of this run opened them (TAPEDECK_PRUNE_ORPHANS=1 deletes them)`,
    ...orphans.map((n) => `tapedeck:   ${n}`),
  ];
}
