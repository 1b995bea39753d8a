/**
 * GitHub-flavoured Markdown for reports a CI step posts on a pull request (`--markdown`): a verdict line first, then
 * a table, details folded in `<details>`. Cells are escaped so a tool argument or a model's answer cannot break the
 * table or open HTML.
 */

/** One table cell: pipes escaped, newlines as spaces, HTML's `<` `>` `&` as entities, cut to `max` characters. */
export function mdCell(value: unknown, max = 120): string {
  const text = (typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))).replace(/\s+/g, ' ').trim();
  const cut = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return escapeHtml(cut).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/`/g, "'");
}

/** Text in a paragraph: HTML escaped, newlines kept as spaces. */
export function mdText(value: string): string {
  return escapeHtml(value.replace(/\s+/g, ' ').trim());
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A table with `head` as its header row; `align` per column ('r' right-aligns numbers). */
export function mdTable(head: readonly string[], rows: readonly (readonly string[])[], align: readonly ('l' | 'r')[] = []): string[] {
  const rule = head.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  return [`| ${head.join(' | ')} |`, `| ${rule.join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

/** A folded section: `summary` shown, `body` (Markdown lines) behind a click. Empty bodies fold nothing. */
export function mdDetails(summary: string, body: readonly string[]): string[] {
  if (body.length === 0) return [];
  return ['<details>', `<summary>${escapeHtml(summary)}</summary>`, '', ...body, '', '</details>'];
}

/** A fenced block that no line of `text` can close (the fence is longer than any run of backticks in it). */
export function mdFence(text: string, lang = ''): string[] {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return [`${fence}${lang}`, ...text.split('\n'), fence];
}

/** A signed number: `+3`, `-2`, `0`. */
export function mdSigned(n: number, format: (x: number) => string = String): string {
  if (n === 0) return format(0);
  return n > 0 ? `+${format(n)}` : `-${format(-n)}`;
}

/** The verdict marks: passed, a warning, failed. */
export const MARK = { pass: '✅', warn: '⚠️', fail: '❌' } as const;
