/**
 * The walkthroughs of the documentation (README.md and docs/*.md), read from its text: a walkthrough is the ```sh
 * block right after a line `<!-- walkthrough: NAME -->` (`<!-- walkthrough: NAME exits 1 -->` when its last command
 * is meant to fail), and its output, when the page shows it, is the block right after `<!-- output: NAME -->` on the
 * same page.
 */
export interface Walkthrough {
  name: string;
  /** The page it is on, relative to the clone's root (`README.md`, `docs/mcp.md`). */
  file: string;
  script: string;
  /** The exit code the block ends with (0 unless the marker says otherwise). */
  exitCode: number;
  /** Shown outputs, in page order: each must appear in what the commands print. */
  outputs: string[];
  /** 1-based line of the marker on its page. */
  line: number;
}

const MARK = /^<!-- (walkthrough|output): ([\w-]+)(?: exits (\d+))? -->$/;

/** The walkthroughs of one page (`file`, as errors name it). */
export function walkthroughs(page: string, file: string): Walkthrough[] {
  const lines = page.split('\n');
  const out = new Map<string, Walkthrough>();
  for (let i = 0; i < lines.length; i++) {
    const m = MARK.exec(lines[i] as string);
    if (!m) continue;
    const [, kind, name] = m as unknown as [string, 'walkthrough' | 'output', string];
    const fence = lines[i + 1] ?? '';
    if (!/^```/.test(fence)) throw new Error(`${file} line ${i + 1}: <!-- ${kind}: ${name} --> must be followed by a fenced block`);
    if (kind === 'walkthrough' && fence !== '```sh') throw new Error(`${file} line ${i + 1}: a walkthrough is a \`\`\`sh block`);
    const end = lines.findIndex((l, k) => k > i + 1 && l === '```');
    if (end === -1) throw new Error(`${file} line ${i + 1}: the block never ends`);
    const text = lines.slice(i + 2, end).join('\n');
    if (kind === 'walkthrough') {
      if (out.has(name)) throw new Error(`${file} line ${i + 1}: a second walkthrough named ${name}`);
      out.set(name, { name, file, script: text, exitCode: Number(m[3] ?? 0), outputs: [], line: i + 1 });
    } else {
      const w = out.get(name);
      if (w === undefined) throw new Error(`${file} line ${i + 1}: output of ${name} before (or without) its walkthrough`);
      w.outputs.push(text);
    }
    i = end;
  }
  return [...out.values()];
}

/**
 * A line as compared: what changes from run to run (durations and offsets, timestamps, ports, pids, the temporary
 * paths of a run) set aside, and runs of spaces (column widths follow the values) made one.
 */
export function normalize(line: string): string {
  return line
    .replace(/\d{4}-\d\d-\d\d[T ]\d\d[:-]\d\d(?:[:-]\d\d(?:[.-]\d+)?Z?)?/g, '<time>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .replace(/\bpid \d+/g, 'pid <n>')
    .replace(/[+-]?\d+(?:\.\d+)?(?:ms|s)\b/g, '<dur>')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The shown lines that do not appear, in order, among the printed ones (empty: the output is as shown). */
export function missingLines(shown: string, printed: string): string[] {
  const have = printed.split('\n').map(normalize);
  const missing: string[] = [];
  let at = 0;
  for (const line of shown.split('\n').map(normalize)) {
    if (line === '') continue;
    const k = have.indexOf(line, at);
    if (k === -1) missing.push(line);
    else at = k + 1;
  }
  return missing;
}
