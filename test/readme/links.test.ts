/**
 * Every relative link of the documentation resolves: README.md, CONTRIBUTING.md, bench/README.md, docs/*.md and
 * python/pytest-tapedeck/README.md link to files and folders that exist, and a link with an anchor (`page.md#part`,
 * `#part`) to a heading that page has, by GitHub's anchor rules. Links inside code (fenced blocks, `spans`) are not
 * links; web addresses are left alone (nothing here reaches the network).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  'bench/README.md',
  'python/pytest-tapedeck/README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The page's text without code: fenced blocks blanked line for line (so line numbers stay), code spans removed. */
function prose(text: string): string[] {
  let fence = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fence = !fence;
      return '';
    }
    return fence ? '' : line.replace(/`[^`]*`/g, '');
  });
}

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation and symbols dropped, spaces as `-`. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a page's headings get, a repeated one numbered (`part`, `part-1`). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence;
    const m = fence ? null : /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1] as string);
    const n = seen.get(base);
    seen.set(base, (n ?? -1) + 1);
    out.add(n === undefined ? base : `${base}-${n + 1}`);
  }
  return out;
}

/** The links of a page that point inside the repository: `[text](target)` and `![alt](target)`, with their line. */
function relativeLinks(text: string): { target: string; line: number }[] {
  const lines = prose(text);
  const joined = lines.join('\n');
  const out: { target: string; line: number }[] = [];
  for (const m of joined.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1] as string;
    if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
    out.push({ target, line: joined.slice(0, m.index).split('\n').length });
  }
  return out;
}

function broken(page: string): string[] {
  const text = readFileSync(path.join(ROOT, page), 'utf8');
  const problems: string[] = [];
  for (const { target, line } of relativeLinks(text)) {
    const [file, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), decodeURI(file));
    const where = `${page}:${line} (${target})`;
    if (!resolved.startsWith(ROOT + path.sep) && resolved !== ROOT) problems.push(`${where}: outside the repository`);
    else if (!existsSync(resolved)) problems.push(`${where}: no such file`);
    else if (anchor !== undefined) {
      if (statSync(resolved).isDirectory() || !resolved.endsWith('.md'))
        problems.push(`${where}: an anchor into a file that is not a page`);
      else if (!anchors(readFileSync(resolved, 'utf8')).has(anchor)) problems.push(`${where}: no heading for #${anchor}`);
    }
  }
  return problems;
}

describe('the links of the documentation', () => {
  it('finds the pages', () => {
    for (const page of PAGES) expect(existsSync(path.join(ROOT, page)), page).toBe(true);
    expect(PAGES.filter((p) => p.startsWith('docs/')).length).toBeGreaterThan(10);
  });

  it.each(PAGES)('%s: every relative link resolves, anchors included', (page) => {
    expect(broken(page)).toEqual([]);
  });

  it('links every page of docs/ from the docs index, and the index from the README', () => {
    const index = readFileSync(path.join(ROOT, 'docs/README.md'), 'utf8');
    const linked = new Set(relativeLinks(index).map((l) => l.target.split('#')[0]));
    const pages = PAGES.filter((p) => p.startsWith('docs/') && p !== 'docs/README.md').map((p) => p.slice('docs/'.length));
    expect(pages.filter((p) => !linked.has(p))).toEqual([]);
    expect(relativeLinks(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).map((l) => l.target)).toContain('docs/README.md');
  });

  // Contributor notes (issue markers, where the suite tests what, CI remarks) belong in CONTRIBUTING.md and
  // bench/README.md; docs/architecture.md is the contributors' page.
  it.each(PAGES.filter((p) => p === 'README.md' || (p.startsWith('docs/') && p !== 'docs/architecture.md')))(
    '%s: no contributor remarks in user documentation',
    (page) => {
      const text = readFileSync(path.join(ROOT, page), 'utf8');
      const remarks = [/<!-- \/?section\b[^>]*-->/g, /\(issue \d+\)/g, /`test\/[^`]*`/g, /\bour CI\b/g, /\btest suite runs\b/g];
      expect(remarks.flatMap((re) => [...text.matchAll(re)].map((m) => m[0]))).toEqual([]);
    },
  );

  it('tells a broken anchor and a missing page from good links', () => {
    expect(slug('The JSON (`--json`)')).toBe('the-json---json');
    expect(slug('Every other HTTP(S) call: the forward proxy')).toBe('every-other-https-call-the-forward-proxy');
    expect(slug('✅ tapedeck diff `baseline` → `run`')).toBe('-tapedeck-diff-baseline--run');
    expect([...anchors('# A\n## A\n```\n# not a heading\n```\n## B')]).toEqual(['a', 'a-1', 'b']);
  });
});
