/**
 * The answers of a replay served by similarity (any semantic stage), read back from the replay tape's records: which
 * recording answered each, how (stage, score), and what was set aside to serve it. What `tapedeck replay --explain`
 * lists after the end-of-run line, and what `show` can say of a step: an answer that is not the recording of the
 * same request should never be silent.
 */
import type { Exchange } from '../tape/schema.js';

export interface SimilarServe {
  /** The replay tape's exchange. */
  id: string;
  /** The recording that answered it. */
  source?: string;
  stage: string;
  score?: number;
  /** What differed and was set aside: per-run values, fields that never change the answer (empty when none). */
  setAside: string[];
  /** The whole reason, as the tape keeps it. */
  reason: string;
}

const ASIDE = '; set aside: ';

/** Every answer of `exchanges` served by a semantic stage, in tape order. */
export function similarServes(exchanges: readonly Exchange[]): SimilarServe[] {
  const out: SimilarServe[] = [];
  for (const ex of exchanges) {
    const m = ex.match;
    if (m?.kind !== 'semantic') continue;
    const reason = m.reason ?? '';
    out.push({
      id: ex.id,
      ...(m.source !== undefined ? { source: m.source } : {}),
      stage: m.stage ?? 'semantic',
      ...(m.score !== undefined ? { score: m.score } : {}),
      setAside: setAsideOf(reason),
      reason,
    });
  }
  return out;
}

/** The items of a reason's `set aside:` part (the stage writes them `; `-separated, last in the reason). */
export function setAsideOf(reason: string): string[] {
  const at = reason.indexOf(ASIDE);
  if (at === -1) return [];
  // A reshaped answer adds ` (recorded streamed, served in the shape asked for)` after the reason.
  const tail = reason.slice(at + ASIDE.length).replace(/ \(recorded (?:not )?streamed, served in the shape asked for\)$/, '');
  return tail.split('; ').filter((s) => s !== '');
}

/**
 * Lines for a terminal: one per similarity-served answer, then what it set aside, indented.
 * `#000004 <- #000001 similarity 0.93`, `    set aside: a clock at messages[0].content (system prompt): ...`.
 */
export function similarServeLines(serves: readonly SimilarServe[]): string[] {
  if (serves.length === 0) return [];
  const lines = [`${serves.length} answer(s) served by similarity:`];
  for (const s of serves) {
    const score = s.score !== undefined ? ` ${s.score.toFixed(2)}` : '';
    lines.push(`  #${s.id} <- #${s.source ?? '?'} ${s.stage}${score}`);
    const differed = /\(score [\d.]+ >= [\d.]+; (.*?)\)(?:; set aside: |$| \(recorded)/.exec(s.reason)?.[1];
    if (differed !== undefined) lines.push(`      differed: ${differed}`);
    for (const item of s.setAside) lines.push(`      set aside: ${item}`);
  }
  return lines;
}
