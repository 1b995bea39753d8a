/**
 * The tape of a vitest test: its file (relative to the project root), its describe blocks and its own name, made a
 * tape name by the rule `tapedeck serve` applies to every helper's tests (`tape/test-tape-name.ts`):
 * `tests/agent.test.ts` > `weather` > `answers in celsius` is the tape `tests/agent/weather/answers-in-celsius`.
 */
import { tapeNameForTest, type TestId } from '../tape/test-tape-name.js';

/** The parts of a vitest task the name is made of (a test, its suites, its file). */
export interface NamedTask {
  name: string;
  suite?: NamedTask | undefined;
  file?: { name: string } | undefined;
}

/** What names a test, as `tapedeck serve` takes it (`GET /@?file=...&name=...`). */
export function testIdOf(task: NamedTask): TestId {
  const names: string[] = [];
  for (let t: NamedTask | undefined = task; t !== undefined; t = t.suite) {
    // The file's own task (the root suite) is named by the file's path: that part comes from `file`.
    if (t.suite === undefined && t.file !== undefined && (t === (t.file as unknown) || t.name === t.file.name)) break;
    if (t.name !== '') names.unshift(t.name);
  }
  return { file: task.file?.name ?? '', names: names.length > 0 ? names : [task.name] };
}

/** The tape `tapedeck serve` gives a test (computed here, by the same rule, where a test cannot wait for an answer). */
export function testTapeName(task: NamedTask): string {
  return tapeNameForTest(testIdOf(task));
}
