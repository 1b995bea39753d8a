/**
 * A replay miss as a value: the `TAPE_MISS` error that names the tape, what was asked, why nothing matched, and the
 * closest recordings with what differed. HTTP and MCP replay both build it here and render it in their own shape.
 */
import { TapedeckError } from '../errors.js';
import type { Candidate } from './matcher.js';
import type { OnMiss } from './modes.js';

export interface MissCandidate {
  id: string;
  score: number;
  /** The recording's path (HTTP misses show it). */
  path?: string;
  differences: string[];
}

export interface MissOptions {
  tape: string;
  /** What was asked, e.g. `POST /openai/v1/chat/completions model gpt-4o` or `tools/call "search"`. */
  asked: string;
  reason: string;
  onMiss: OnMiss;
  closest: readonly MissCandidate[];
  /** Said when there is no candidate at all. */
  noCandidates?: string;
  /** Details for the client beside the message (sent as `tapedeck`). */
  details: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** The candidates of a miss as a client sees them. */
export function missCandidates(candidates: readonly Candidate[], opts: { withPath?: boolean } = {}): MissCandidate[] {
  return candidates.map((c) => ({
    id: c.exchange.id,
    score: c.score,
    ...(opts.withPath ? { path: c.exchange.request.path } : {}),
    differences: c.differences,
  }));
}

export function missError(o: MissOptions): TapedeckError {
  const closest =
    o.closest.length > 0
      ? ` Closest: ${o.closest.map((c) => `#${c.id} score ${c.score} [${c.differences.slice(0, 3).join('; ') || 'no field differs'}]`).join(' | ')}`
      : (o.noCandidates ?? '');
  const message = `tapedeck: no recording on tape "${o.tape}" matches ${o.asked} (${o.reason}; on-miss ${o.onMiss}).${closest}`;
  return new TapedeckError('TAPE_MISS', message, { details: o.details, ...(o.headers ? { headers: o.headers } : {}) });
}
