/**
 * One step in full, fetched when it is opened: the conversation as the model saw it, the tool results so far,
 * the exchange (strings over a limit clipped, with their size; the raw endpoint has them whole), and on replay
 * tapes how the answer was found, with the recorded exchange it came from when the original tape is at hand.
 */
import type { Exchange, MatchInfo } from '../tape/schema.js';
import { stateAt, type ConversationMessage } from './model.js';
import type { OpenTape } from './open-tapes.js';
import type { TimelineItem } from './timeline-items.js';

/** Strings longer than this are clipped in a step's detail (64 KiB of text is already more than anyone reads in a panel). */
export const CLIP_CHARS = 64 * 1024;
/** Tool results so far shown with a step: the latest ones (a long run has thousands; the step's own is always among them). */
export const MAX_TOOL_RESULTS = 100;

export interface MatchExplanation extends MatchInfo {
  /** The tape this replay answered from. */
  tape: string | null;
  /** The recorded exchange that was served, when the original tape could be read. */
  served: { i: number; id: string; target: string; start: number } | null;
}

export interface StepDetail {
  item: TimelineItem;
  total: number;
  /** Timeline position of the LLM call whose request is the conversation shown; null when none came at or before. */
  conversationFrom: number | null;
  conversation: ConversationMessage[];
  /** The latest tool results at this step (at most MAX_TOOL_RESULTS), and how many there were in all. */
  toolResults: { source: string; step: number; name?: string; toolCallId?: string; result: unknown; isError?: boolean }[];
  toolResultsTotal: number;
  exchange: unknown;
  /** True when some string in the exchange or conversation was clipped (the raw exchange is whole). */
  clipped: boolean;
  match: MatchExplanation | null;
  notes: Record<string, unknown> | null;
}

export function stepDetail(open: OpenTape, index: number, original?: OpenTape): StepDetail {
  const state = stateAt(open.steps, index);
  const ex = state.exchange;
  const clip = clipper(CLIP_CHARS);
  return {
    item: open.items[state.index] as TimelineItem,
    total: open.items.length,
    conversationFrom: state.conversationFrom,
    conversation: clip.value(state.conversation) as ConversationMessage[],
    toolResults: clip.value(state.toolResults.slice(-MAX_TOOL_RESULTS)) as StepDetail['toolResults'],
    toolResultsTotal: state.toolResults.length,
    exchange: clip.value(ex),
    clipped: clip.clipped(),
    match: ex.match ? explainMatch(ex, open, original) : null,
    notes: ex.notes ?? null,
  };
}

function explainMatch(ex: Exchange, open: OpenTape, original?: OpenTape): MatchExplanation {
  const match = ex.match as MatchInfo;
  let served: MatchExplanation['served'] = null;
  if (original && match.source !== undefined) {
    const i = original.byId.get(match.source);
    const it = i === undefined ? undefined : original.items[i];
    if (it) served = { i: it.i, id: it.id, target: it.target, start: it.start };
  }
  return { ...match, tape: open.header.replayOf?.tape ?? null, served };
}

/** Copies a value with every string longer than `max` shortened, and remembers whether it shortened any. */
function clipper(max: number): { value: (v: unknown) => unknown; clipped: () => boolean } {
  let any = false;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      if (v.length <= max) return v;
      any = true;
      return `${v.slice(0, max)}… [clipped: ${v.length.toLocaleString('en-US')} characters in all; see the raw exchange]`;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return { value: walk, clipped: () => any };
}
