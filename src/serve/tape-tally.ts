/**
 * What a tape did, counted as its exchanges reach it: a store that hands out writers which tally each stored exchange
 * by how it was answered (recorded; replayed from the tape; missed or blocked; forwarded live), and that sends replay
 * tapes where the server keeps them (beside their tapes, or a scratch store that forgets them).
 */
import { conversationOf } from '../providers/describe.js';
import { faultOf, outcomeOf } from '../replay/outcome.js';
import type { Exchange } from '../tape/schema.js';
import type { TapeStore, TapeWriter, WriterOptions } from '../tape/store.js';

export interface TapeTally {
  recorded: number;
  /** Answered from the tape (exactly, by similarity, or mocked); `similar` of them by similarity. */
  replayed: number;
  similar: number;
  /** The tape could not answer (a miss, or a blocked side effect); `blocked` of them blocked. */
  missed: number;
  blocked: number;
  live: number;
  /** Answers a fault rule made up or disturbed (`replay/outcome.ts` reads the marks). */
  faults: number;
  /** The first miss: the call and why, as the replay tape has it. */
  firstMiss?: string;
  /** The rule of the first fault injected (`#1 openai call 2 -> 429`). */
  firstFault?: string;
}

export function emptyTally(): TapeTally {
  return { recorded: 0, replayed: 0, similar: 0, missed: 0, blocked: 0, live: 0, faults: 0 };
}

/**
 * Count one stored exchange. An answer a fault rule made up is a fault, and, in a recording, one of its exchanges;
 * never an answer replayed from the tape.
 */
export function tally(
  counts: TapeTally,
  ex: Pick<Exchange, 'match' | 'notes' | 'route' | 'request' | 'llm' | 'mcp'>,
  mode: 'record' | 'replay',
): void {
  const outcome = outcomeOf(ex);
  const fault = faultOf(ex);
  if (fault !== undefined) {
    counts.faults++;
    counts.firstFault ??= fault;
  }
  if (outcome === 'recorded' || (outcome === 'fault' && mode === 'record')) counts.recorded++;
  else if (outcome === 'miss' || outcome === 'blocked') {
    counts.missed++;
    if (outcome === 'blocked') counts.blocked++;
    counts.firstMiss ??= missText(ex);
  } else if (outcome === 'live') counts.live++;
  else if (outcome !== 'fault') {
    counts.replayed++;
    if (outcome === 'similar') counts.similar++;
  }
}

/** `LLM gpt-4.1 "what was asked": no recorded request has this exact key` (shortened). */
function missText(ex: Pick<Exchange, 'match' | 'route' | 'request' | 'llm' | 'mcp'>): string {
  const asked = ex.llm ? conversationOf(ex).findLast((m) => m.role === 'user' && m.text !== '')?.text : undefined;
  const call = ex.llm
    ? `LLM ${ex.llm.model ?? ex.llm.api}${asked === undefined ? '' : ` "${asked.length > 60 ? `${asked.slice(0, 59)}…` : asked}"`}`
    : ex.mcp
      ? `MCP ${ex.mcp.method}${ex.mcp.toolName ? ` ${ex.mcp.toolName}` : ''}`
      : `${ex.request.method} ${ex.route}${ex.request.path}`;
  const why = ex.match?.reason ?? (ex.match?.kind === 'blocked' ? 'blocked as a side effect' : 'no recording matches it');
  return `${call}: ${why.length > 160 ? `${why.slice(0, 159)}…` : why}`;
}

/** What else sees each stored exchange (the recordings a replay's answers came from, for `--expect`). */
export type OnStored = (ex: Exchange) => void;

/** A writer that tallies every exchange it stores (an open WebSocket session counts when it starts). */
export function tallyingWriter(writer: TapeWriter, counts: TapeTally, onStored?: OnStored): TapeWriter {
  return {
    get path() {
      return writer.path;
    },
    get name() {
      return writer.name;
    },
    get header() {
      return writer.header;
    },
    get count() {
      return writer.count;
    },
    get failure() {
      return writer.failure;
    },
    now: () => writer.now(),
    append: async (ex) => {
      const stored = await writer.append(ex);
      tally(counts, stored, writer.header.mode);
      onStored?.(stored);
      return stored;
    },
    begin: async (ex) => {
      const open = await writer.begin(ex);
      tally(counts, open.exchange, writer.header.mode);
      onStored?.(open.exchange);
      return open;
    },
    eventLines: (events) => writer.eventLines(events),
    close: () => writer.close(),
  };
}

/** `store`, but its writers tally into `counts` (and tell `onStored`), and replay tapes are written to `replays`. */
export function tallyingStore(store: TapeStore, replays: TapeStore, counts: TapeTally, onStored?: OnStored): TapeStore {
  const openWriter = async (opts: WriterOptions): Promise<TapeWriter> =>
    tallyingWriter(await (opts.header.mode === 'replay' ? replays : store).openWriter(opts), counts, onStored);
  return new Proxy(store, {
    get(target, key) {
      if (key === 'openWriter') return openWriter;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
