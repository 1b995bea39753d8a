/**
 * Two runs side by side for the compare view: the diff `tapedeck diff --json` prints, plus the rows to draw it:
 * the two tool sequences by position with each call's edit mark (`-` only in A, `+` only in B, `~` moved), and
 * the compared steps by position with per-step deltas and the first divergence marked.
 */
import {
  compareRuns,
  editMarks,
  labelOf,
  type CostFn,
  type EditMark,
  type Run,
  type RunDiff,
  type StepKind,
  type ToolCallEntry,
} from './model.js';
import type { OpenTape } from './open-tapes.js';

const SHORT_ARGS = 200;

export interface ToolCell {
  toolName: string;
  args: string;
  argsHash: string;
  source: ToolCallEntry['source'];
  /** `-` removed (only in A), `+` added (only in B), `~` reordered; null when both runs made it here. */
  mark: EditMark | null;
}

export interface StepCell {
  label: string;
  kind: StepKind;
  /** The exchange id and its position on the tape's timeline (to open it). */
  id: string;
  i: number | null;
  durationMs: number;
  tokens: number | null;
  error: boolean;
}

export interface Comparison {
  a: { name: string; createdAt: string; mode: string };
  b: { name: string; createdAt: string; mode: string };
  diff: RunDiff;
  tools: { a: ToolCell | null; b: ToolCell | null }[];
  steps: { a: StepCell | null; b: StepCell | null; divergent: boolean; delta: { durationMs: number | null; tokens: number | null } }[];
}

export function compareTapes(a: OpenTape, b: OpenTape, costOf: CostFn): Comparison {
  const { a: ra, b: rb, diff } = compareRuns(a.tape, b.tape, costOf);
  const marks = editMarks(diff.toolSequenceDiff);
  const tools: Comparison['tools'] = [];
  for (let i = 0; i < Math.max(ra.tools.length, rb.tools.length); i++)
    tools.push({ a: toolCell(ra.tools[i], marks.a.get(i)), b: toolCell(rb.tools[i], marks.b.get(i)) });
  const steps: Comparison['steps'] = [];
  const at = diff.firstDivergence?.step;
  for (let i = 0; i < Math.max(ra.steps.length, rb.steps.length); i++) {
    const sa = stepCell(ra, i, a);
    const sb = stepCell(rb, i, b);
    steps.push({
      a: sa,
      b: sb,
      divergent: i === at,
      delta: {
        durationMs: sa && sb ? Math.round((sb.durationMs - sa.durationMs) * 10) / 10 : null,
        tokens: sa?.tokens != null && sb?.tokens != null ? sb.tokens - sa.tokens : null,
      },
    });
  }
  const side = (t: OpenTape): Comparison['a'] => ({ name: t.name, createdAt: t.header.createdAt, mode: t.header.mode });
  return { a: side(a), b: side(b), diff, tools, steps };
}

function toolCell(entry: ToolCallEntry | undefined, mark: ToolCell['mark'] | undefined): ToolCell | null {
  if (entry === undefined) return null;
  const json = JSON.stringify(entry.arguments) ?? '';
  return {
    toolName: entry.toolName,
    args: json.length > SHORT_ARGS ? `${json.slice(0, SHORT_ARGS)}…` : json,
    argsHash: entry.argsHash,
    source: entry.source,
    mark: mark ?? null,
  };
}

function stepCell(run: Run, i: number, open: OpenTape): StepCell | null {
  const s = run.steps[i];
  if (s === undefined) return null;
  const ex = s.exchange;
  const u = ex.llm?.usage;
  const item = open.items[open.byId.get(ex.id) ?? -1];
  return {
    label: labelOf(s),
    kind: s.kind,
    id: ex.id,
    i: item?.i ?? null,
    durationMs: ex.timing.durationMs,
    tokens: u ? (u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0)) : null,
    error: item?.error != null,
  };
}
