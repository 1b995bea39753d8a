/**
 * The tape of a test: its file (relative to the project root, less `.test.ts` / `.spec.ts`), its describe blocks and
 * its own name, each made a tape-name segment (letters, digits, `.`, `_`, `-`): `tests/agent.test.ts` > `weather` >
 * `answers in celsius` is the tape `tests/agent/weather/answers-in-celsius`.
 */

/** The parts of a vitest task the name is made of (a test, its suites, its file). */
export interface NamedTask {
  name: string;
  suite?: NamedTask | undefined;
  file?: { name: string } | undefined;
}

export function segment(text: string): string {
  const s = text
    .replace(/[^\w.-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|-+$/g, '');
  return s === '' ? '_' : s;
}

export function testTapeName(task: NamedTask): string {
  const file = task.file?.name ?? '';
  const names: string[] = [];
  for (let t: NamedTask | undefined = task; t !== undefined; t = t.suite) {
    // The file's own task (the root suite) is named by the file's path: that part comes from `file`.
    if (t.suite === undefined && t.file !== undefined && (t === (t.file as unknown) || t.name === t.file.name)) break;
    if (t.name !== '') names.unshift(t.name);
  }
  const fileParts = file
    .replace(/\\/g, '/')
    .replace(/\.(test|spec)\.[cm]?[jt]sx?$|\.[cm]?[jt]sx?$/, '')
    .split('/')
    .filter((p) => p !== '' && p !== '.' && p !== '..');
  return [...fileParts, ...names].map(segment).join('/');
}
