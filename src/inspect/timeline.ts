/**
 * The timeline: one line per step (offset, kind, route, model or tool, arguments and result in short, tokens,
 * duration, status, match kind). Failing and blocked steps stand out with a `!` marker (and red on a TTY).
 */
import { fit, formatMs, oneLine, shorten, type Style } from './format.js';
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

/**
 * The detail of a step in `n` columns: what was asked, then what came back. The prompt (or arguments) gets the room
 * first: one that fits in three quarters of it shows whole, a longer one gets at least 60%; the result gets the rest.
 */
export function stepDetail(args: unknown, result: unknown, n: number): string {
  const a = oneLine(args);
  const r = oneLine(result);
  const sep = a !== '' && r !== '' ? 3 : 0;
  if (a.length + sep + r.length <= n) return `${a}${sep ? ' → ' : ''}${r}`;
  if (r === '') return shorten(args, n);
  if (a === '') return shorten(result, n);
  const argsRoom = a.length <= Math.floor(n * 0.75) ? a.length : Math.max(Math.floor(n * 0.6), n - sep - r.length);
  const shownArgs = shorten(args, Math.max(8, argsRoom));
  return fit(`${shownArgs} → ${shorten(result, Math.max(8, n - sep - shownArgs.length))}`, n);
}

/**
 * Human lines for the timeline, laid out for `width` columns (`Infinity`: nothing is cut). Route and model columns
 * are as wide as their longest value (up to 14 and 28 unless `width` is Infinity), so the prompt and result get the rest
 * of the line.
 */
export function renderTimeline(steps: readonly Step[], width: number, style: Style): string[] {
  const idxW = String(Math.max(0, steps.length - 1)).length;
  const offW = Math.max(0, ...steps.map((s) => formatMs(s.offsetMs).length + 1));
  // With no width (`--wide`) nothing is cut: a Bedrock model id (`us.anthropic.claude-3-7-sonnet-20250219-v1:0`) whole.
  const cap = (most: number, n: number): number => (Number.isFinite(width) ? Math.min(most, n) : n);
  const routeW = cap(14, Math.max(0, ...steps.map((s) => s.route.length)));
  const targetW = cap(28, Math.max(0, ...steps.map((s) => s.target.length)));
  const rows = steps.map((s) => {
    const bad = s.error !== undefined;
    const head = [
      `${bad ? '!' : ' '}${String(s.index).padStart(idxW)}`,
      `+${formatMs(s.offsetMs)}`.padStart(offW),
      s.kind.padEnd(4),
      fit(s.route, routeW).padEnd(routeW),
      fit(s.target, targetW).padEnd(targetW),
    ].join(' ');
    const tail = [tokensText(s.tokens), formatMs(s.durationMs), s.status === undefined ? '---' : String(s.status), s.match ?? '']
      .filter((x) => x !== '')
      .join(' ');
    return { s, bad, head, tail };
  });
  const headW = Math.max(0, ...rows.map((r) => r.head.length));
  const room = width - headW - Math.max(0, ...rows.map((r) => r.tail.length)) - 2;
  const details = rows.map((r) => (room >= 24 ? stepDetail(r.s.args, r.s.result, room) : ''));
  // Tails line up after the longest detail shown, not at the far edge of a wide terminal; unlimited lines do not line up.
  const detailW = Number.isFinite(width) ? Math.max(0, ...details.map((d) => d.length)) : 0;
  const lines: string[] = [];
  rows.forEach(({ s, bad, head, tail }, i) => {
    if (room >= 24) {
      const line = `${head.padEnd(headW)} ${(details[i] as string).padEnd(detailW)} ${tail}`.trimEnd();
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
      const d = stepDetail(s.args, s.result, width - 6);
      if (d !== '') lines.push(style.dim(`      ${d}`));
    }
    if (bad) lines.push(style.red(fit(`      ${s.error ?? ''}`, width)));
  });
  return lines;
}
