/**
 * The timeline: one line per step (offset, kind, route, model or tool, arguments and result in short, tokens,
 * duration, status, match kind). Failing and blocked steps stand out with a `!` marker (and red on a TTY).
 */
import { fit, formatMs, shorten, type Style } from './format.js';
import type { Step } from './steps.js';

export interface TimelineRow {
  index: number;
  offsetMs: number;
  kind: Step['kind'];
  route: string;
  target: string;
  args: string;
  result: string;
  tokens: { input?: number; output?: number; total?: number } | null;
  durationMs: number;
  status: number | null;
  match: string | null;
  error: string | null;
}

/** The JSON form of a timeline row (what `show` prints as JSON): arguments and result shortened to `max` characters. */
export function timelineRow(step: Step, max = 200): TimelineRow {
  return {
    index: step.index,
    offsetMs: step.offsetMs,
    kind: step.kind,
    route: step.route,
    target: step.target,
    args: shorten(step.args, max),
    result: shorten(step.result, max),
    tokens: step.tokens ?? null,
    durationMs: step.durationMs,
    status: step.status ?? null,
    match: step.match ?? null,
    error: step.error ?? null,
  };
}

function tokensText(t: Step['tokens']): string {
  if (!t) return '';
  if (t.input !== undefined || t.output !== undefined) return `${t.input ?? '?'}→${t.output ?? '?'}tok`;
  return t.total !== undefined ? `${t.total}tok` : '';
}

/** Human lines for the timeline, laid out for `width` columns. */
export function renderTimeline(steps: readonly Step[], width: number, style: Style): string[] {
  const idxW = String(Math.max(0, steps.length - 1)).length;
  const lines: string[] = [];
  for (const s of steps) {
    const bad = s.error !== undefined;
    const head = [
      `${bad ? '!' : ' '}${String(s.index).padStart(idxW)}`,
      `+${formatMs(s.offsetMs)}`.padStart(8),
      s.kind.padEnd(4),
      fit(s.route, 14),
      fit(s.target, 28),
    ].join(' ');
    const tail = [tokensText(s.tokens), formatMs(s.durationMs), s.status === undefined ? '---' : String(s.status), s.match ?? '']
      .filter((x) => x !== '')
      .join(' ');
    const fixed = head.length + tail.length + 2;
    const room = width - fixed;
    const detail = (n: number): string => {
      // The result says more than the (often repeated) question: it gets the larger share.
      const share = Math.max(8, Math.floor((n - 3) * 0.4));
      const a = shorten(s.args, share);
      const r = shorten(s.result, Math.max(8, n - 3 - a.length));
      return fit(`${a}${a && r ? ' → ' : ''}${r}`, n);
    };
    const errText = bad ? `  ${s.error ?? ''}` : '';
    if (room >= 24) {
      const line = `${head} ${detail(room).padEnd(room)} ${tail}`;
      lines.push(bad ? style.red(line) : line);
    } else {
      // Narrow terminal: status and timing first (they must stay visible), the detail indented below.
      const short = [
        `${bad ? '!' : ' '}${String(s.index).padStart(idxW)}`,
        `+${formatMs(s.offsetMs)}`,
        s.kind,
        tail,
        s.route,
        s.target,
      ].join(' ');
      const line = fit(short, width);
      lines.push(bad ? style.red(line) : line);
      const d = detail(width - 6);
      if (d !== '') lines.push(style.dim(`      ${d}`));
    }
    if (bad) lines.push(style.red(fit(`      ${errText.trim()}`, width)));
  }
  return lines;
}
