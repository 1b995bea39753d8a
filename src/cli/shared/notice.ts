/**
 * tapedeck's own lines on stderr (`tapedeck: recording to ...`, `tapedeck diff: ...`), in the one style every command
 * uses: a warning (a miss, a blocked call, a deprecated flag) yellow and an error red on a terminal, plain text on a
 * pipe (`styleFor`: `NO_COLOR` and `FORCE_COLOR` as everywhere).
 */
import type { Writable } from 'node:stream';
import { styleFor } from '../../inspect/format.js';

export type Tone = 'plain' | 'warn' | 'error' | 'dim';

/** Where a notice goes and the environment that decides its colour (a command's context has both). */
export interface NoticeTarget {
  stderr: Writable;
  env: NodeJS.ProcessEnv;
}

/** The lines as they are printed: `prefix: line`, each coloured for its tone. */
export function noticeText(to: NoticeTarget, lines: readonly string[], tone: Tone = 'plain', prefix = 'tapedeck'): string {
  const style = styleFor(to.stderr, to.env);
  const paint = tone === 'warn' ? style.yellow : tone === 'error' ? style.red : tone === 'dim' ? style.dim : (s: string) => s;
  return lines.map((line) => `${paint(`${prefix}: ${line}`)}\n`).join('');
}

/** A line with its tone, for lists of lines printed together (a replay's preflight). */
export interface Said {
  text: string;
  tone: Tone;
}

/** A line to print as a warning. */
export function warning(text: string): Said {
  return { text, tone: 'warn' };
}

/** Print lines, each a plain string or a line with its tone, as `tapedeck: LINE`. */
export function noticeLines(to: NoticeTarget, lines: readonly (string | Said)[]): void {
  to.stderr.write(lines.map((l) => (typeof l === 'string' ? noticeText(to, [l]) : noticeText(to, [l.text], l.tone))).join(''));
}

/** Write `lines` to stderr as tapedeck's own (`tapedeck: LINE`, or `tapedeck COMMAND: LINE` with that prefix). */
export function notice(to: NoticeTarget, line: string | readonly string[], tone: Tone = 'plain', prefix = 'tapedeck'): void {
  to.stderr.write(noticeText(to, typeof line === 'string' ? [line] : line, tone, prefix));
}
