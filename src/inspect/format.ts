/**
 * Output helpers for the inspector and every CLI command: shortening long values (with their size shown), wrapping,
 * terminal width, colour. One rule for colour everywhere (`colourOn`): on a terminal, never on a pipe or a file;
 * `NO_COLOR` turns it off, `FORCE_COLOR` on (or off with `FORCE_COLOR=0`), as Node's own output does.
 */
import type { Writable } from 'node:stream';

export const DEFAULT_WIDTH = 100;

/** Human size of a string's UTF-8 bytes: `812 B`, `12.3 KB`, `4.1 MB`. */
export function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A value as one line of text: strings as they are, everything else as compact JSON. */
export function oneLine(value: unknown): string {
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return text.replace(/\s+/g, ' ').trim();
}

/** How much of a text `shorten` reads. */
const SHORTEN_READS = 64 * 1024;

/**
 * Shorten a value to at most `max` characters. When cut, a value of 1 KB or more ends with `...` and its full size
 * (`lorem ipsum... (12.3 KB)`), a smaller one (or one cut to very few characters) with `…`.
 */
export function shorten(value: unknown, max: number): string {
  // Only the start of a long text is read: collapsing the whitespace of megabytes (an answer drift read) would cost
  // gigabytes for the few words shown.
  const long = typeof value === 'string' && value.length > SHORTEN_READS;
  const text = oneLine(long ? value.slice(0, SHORTEN_READS) : value);
  if (text.length <= max && !long) return text;
  const bytes = Buffer.byteLength(typeof value === 'string' ? value : text, 'utf8');
  const suffix = `... (${humanBytes(bytes)})`;
  // The text comes before its size: a size note only for a value of 1 KB or more, and only with room for words.
  if (bytes < 1024 || max - suffix.length < 8) return `${text.slice(0, Math.max(1, max - 1))}…`;
  return `${text.slice(0, max - suffix.length)}${suffix}`;
}

/** Milliseconds as `850ms`, `1.2s`, `3m05s`. */
export function formatMs(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m}m${String(s).padStart(2, '0')}s`;
}

export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '-';
  if (usd === 0) return '$0';
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** The narrowest layout: below this, lines would say nothing. */
export const MIN_WIDTH = 40;

/**
 * Width to lay out for: the one asked for (a number, or `Infinity` for lines that are never cut), else the
 * terminal's columns on a TTY, else `COLUMNS` from the environment (piped output), else DEFAULT_WIDTH; never below
 * MIN_WIDTH.
 */
export function outputWidth(out: Writable, env: NodeJS.ProcessEnv = {}, asked?: number): number {
  if (asked !== undefined) return Math.max(MIN_WIDTH, asked);
  const cols = (out as Partial<NodeJS.WriteStream>).columns;
  if (typeof cols === 'number' && cols > 0) return Math.max(MIN_WIDTH, cols);
  const fromEnv = /^\d+$/.test(env.COLUMNS ?? '') ? Number(env.COLUMNS) : 0;
  return Math.max(MIN_WIDTH, fromEnv > 0 ? fromEnv : DEFAULT_WIDTH);
}

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  green(s: string): string;
  cyan(s: string): string;
}

const wrap =
  (open: number, close: number) =>
  (s: string): string =>
    `\u001b[${open}m${s}\u001b[${close}m`;
const plain = (s: string): string => s;

/**
 * Whether to colour what goes to `out`: `FORCE_COLOR` first (set: on, whatever the stream, unless it is `0` or
 * `false`; Node's own rule, which puts it over `NO_COLOR`), then `NO_COLOR` set and not empty: off
 * (https://no-color.org), else only when `out` is a terminal.
 */
export function colourOn(out: Writable, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return !['0', 'false'].includes(force.trim().toLowerCase());
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return (out as Partial<NodeJS.WriteStream>).isTTY === true;
}

/** No colour: for output that is not a terminal's, and the default of renderers that take a style. */
export const PLAIN_STYLE: Style = { bold: plain, dim: plain, red: plain, yellow: plain, green: plain, cyan: plain };

/** The colours for `out` (see `colourOn`): escape codes on a terminal, the text as it is elsewhere. */
export function styleFor(out: Writable, env: NodeJS.ProcessEnv = process.env): Style {
  if (!colourOn(out, env)) return PLAIN_STYLE;
  return { bold: wrap(1, 22), dim: wrap(2, 22), red: wrap(31, 39), yellow: wrap(33, 39), green: wrap(32, 39), cyan: wrap(36, 39) };
}

/** Cut a plain line to `width` characters (for lines with no escape codes). */
export function fit(line: string, width: number): string {
  return line.length <= width ? line : `${line.slice(0, Math.max(1, width - 1))}…`;
}

/**
 * `text` as lines of at most `width` columns, broken at spaces and never cut: the first line starts with `first`,
 * the others with `rest` (a hanging indent). A word longer than a line is broken where the line ends. `Infinity`
 * (`--wide`): one line.
 */
export function wrapText(text: string, width: number, first: string, rest: string = first): string[] {
  if (!Number.isFinite(width)) return [first + text];
  const lines: string[] = [];
  let indent = first;
  let line = '';
  const room = (): number => Math.max(20, width - indent.length);
  const push = (): void => {
    lines.push(indent + line);
    indent = rest;
    line = '';
  };
  for (let word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > room()) push();
    // A word longer than a whole line (a URL, JSON without spaces) is broken where the line ends.
    while (line === '' && word.length > room()) {
      line = word.slice(0, room());
      word = word.slice(line.length);
      push();
    }
    line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '' || lines.length === 0) lines.push(indent + line);
  return lines;
}
