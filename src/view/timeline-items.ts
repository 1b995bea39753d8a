/**
 * What the viewer's timeline shows of each step: small enough to page 10,000 of them to a browser (no bodies),
 * with everything a waterfall row needs: lane, start, time to first byte, duration, stream ticks, and the marks
 * (error, blocked, miss, semantic match).
 */
import type { MatchKind } from '../tape/schema.js';
import { rowOf, type Step, type StepKind } from './model.js';

/** Stream events drawn as ticks on a row at most (evenly sampled beyond this). */
const MAX_TICKS = 48;
/** Arguments and results in short on a row. */
const SHORT = 160;

export interface TimelineItem {
  /** Position on the timeline (0-based). */
  i: number;
  /** The exchange id: stable while a live tape grows (positions can shift when an earlier-started exchange completes). */
  id: string;
  kind: StepKind;
  /** `llm` for model calls, `tool` for MCP and plain HTTP. */
  lane: 'llm' | 'tool';
  route: string;
  target: string;
  args: string;
  result: string;
  /**
   * Start, ms since the run's first exchange started (not since the tape was created: a recorder that waited a
   * minute for its agent would squeeze every bar to the right).
   */
  start: number;
  /** Time to the first response byte, ms after start; null when no byte came. */
  ttfb: number | null;
  dur: number;
  status: number | null;
  error: string | null;
  match: MatchKind | null;
  /** How a semantic match was found, and its score. */
  stage: string | null;
  score: number | null;
  tokens: { input?: number; output?: number; total?: number } | null;
  /** Server-sent events on the answer, and where (ms after start) a sample of them arrived. */
  events: number;
  ticks: number[];
}

/** `origin`: the first exchange's offset on the tape; every start is counted from it. */
export function timelineItem(step: Step, origin = 0): TimelineItem {
  const ex = step.exchange;
  const row = rowOf(step, SHORT);
  const events = ex.response?.events ?? [];
  return {
    i: step.index,
    id: ex.id,
    kind: row.kind,
    lane: row.kind === 'LLM' ? 'llm' : 'tool',
    route: row.route,
    target: row.target,
    args: row.args,
    result: row.result,
    start: ex.offsetMs - origin,
    ttfb: ex.timing.ttfbMs ?? null,
    dur: ex.timing.durationMs,
    status: row.status,
    error: row.error,
    match: ex.match?.kind ?? null,
    stage: ex.match?.stage ?? null,
    score: ex.match?.score ?? null,
    tokens: row.tokens,
    // A stream stored apart (over 16 MiB) counts its events; their times stay on the tape.
    events: ex.response?.eventsFile?.events ?? events.length,
    ticks: sample(events.map((e) => e.offsetMs)),
  };
}

function sample(offsets: number[]): number[] {
  if (offsets.length <= MAX_TICKS) return offsets;
  const out: number[] = [];
  for (let k = 0; k < MAX_TICKS; k++) out.push(offsets[Math.round((k * (offsets.length - 1)) / (MAX_TICKS - 1))] as number);
  return out;
}

/** The whole run in a few numbers per step, for the lanes overview: columns, not objects, to stay small. */
export interface Overview {
  spanMs: number;
  start: number[];
  dur: number[];
  /** One character per step: `L` (LLM lane) or `T` (tool lane). */
  lane: string;
  /** One character per step: `.` fine, `e` error, `b` blocked, `m` miss, `s` semantic match. */
  mark: string;
}

export function overviewOf(items: readonly TimelineItem[]): Overview {
  let spanMs = 0;
  let lane = '';
  let mark = '';
  const start: number[] = [];
  const dur: number[] = [];
  for (const it of items) {
    spanMs = Math.max(spanMs, it.start + it.dur);
    start.push(it.start);
    dur.push(it.dur);
    lane += it.lane === 'llm' ? 'L' : 'T';
    mark += markOf(it);
  }
  return { spanMs, start, dur, lane, mark };
}

export function markOf(it: TimelineItem): string {
  if (it.match === 'blocked') return 'b';
  if (it.match === 'miss') return 'm';
  if (it.error !== null) return 'e';
  if (it.match === 'semantic') return 's';
  return '.';
}
