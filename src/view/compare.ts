/**
 * Two runs side by side for the compare view: the diff `tapedeck diff --json` prints (ARS and the LLM calls with
 * their output similarity included), plus the rows to draw it: the two tool sequences by position with each call's
 * edit mark (`-` only in A, `+` only in B, `~` moved), and the compared steps by position, each with its step
 * number on its own tape (as `tapedeck show` numbers it), per-step deltas, blocked calls and the first divergence marked.
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
  /** Why replay refused to run it (a side effect the tape has no recording of); null when it ran or was answered. */
  blocked: string | null;
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
  /** Why replay refused it (a blocked side effect), else null. */
  blocked: string | null;
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
    tools.push({ a: toolCell(ra.tools[i], marks.a.get(i), ra), b: toolCell(rb.tools[i], marks.b.get(i), rb) });
  const steps: Comparison['steps'] = [];
  // The row where the runs part: the compared steps there carry the divergence's step numbers (null: that run ended).
  const fd = diff.firstDivergence;
  const at =
    fd === null
      ? -1
      : Array.from({ length: Math.max(ra.steps.length, rb.steps.length) }).findIndex(
          (_, i) => (ra.steps[i]?.index ?? null) === fd.step && (rb.steps[i]?.index ?? null) === fd.replayStep,
        );
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

function toolCell(entry: ToolCallEntry | undefined, mark: ToolCell['mark'] | undefined, run: Run): ToolCell | null {
  if (entry === undefined) return null;
  const json = JSON.stringify(entry.arguments) ?? '';
  const executed = entry.mcpExchangeId === undefined ? undefined : run.exchanges.find((ex) => ex.id === entry.mcpExchangeId);
  return {
    toolName: entry.toolName,
    args: json.length > SHORT_ARGS ? `${json.slice(0, SHORT_ARGS)}…` : json,
    argsHash: entry.argsHash,
    source: entry.source,
    mark: mark ?? null,
    blocked: blockedWhy(executed?.match),
  };
}

function blockedWhy(match: { kind: string; reason?: string | undefined } | undefined): string | null {
  return match?.kind === 'blocked' ? (match.reason ?? 'blocked') : null;
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
    blocked: blockedWhy(ex.match),
  };
}
