/**
 * The semantic stages of the matching pipeline, run after an exact miss:
 * - `normalised`: the same request once case, whitespace, prose punctuation, contractions, JSON key order and per-run
 *   noise (a system prompt's clocks and UUIDs, provider ids, labelled nonces, `user`, `metadata`) are set aside; or
 *   the same apart from identifiers the tape itself shows varying between runs. O(1), score 1.
 * - `similarity`: the same bucket (see `view.ts`: every parameter equal) and every text field similar enough,
 *   compared field by field (`text.ts`), with changes of meaning rejected outright. Without embeddings only function
 *   words and known spelling variants may differ; with embeddings, the cosine judges other rewordings.
 * Both only look at recordings in the request's bucket; similarity shortlists them through a word index, so a tape
 * of 100,000 exchanges still answers a miss in milliseconds, and scores them a few milliseconds at a time, giving
 * the event loop back in between (a long prompt against a bucket of long recordings never holds other requests up).
 * Every hit's reason says what was set aside (`aside.ts`).
 */
import type { IncomingRequest, MatchStage, StageContext, StageHit } from '../matcher.js';
import { asideNote, setAside } from './aside.js';
import { cosine, createEmbedder, type Embedder, type EmbeddingsOptions } from './embeddings.js';
import { looseKey, normalisedKey, slotsOf, type Entry, type SemanticIndex, type VaryingGroup } from './semantic-index.js';
import { compareText, sameAddress } from './text.js';
import type { SemanticView } from './view.js';

export { SemanticIndex } from './semantic-index.js';

export interface SemanticOptions {
  /** Similarity a request must reach to be served a recording (default 0.85). */
  threshold?: number;
  /** Thresholds per route prefix (`/openai: 0.9`). */
  routes?: Readonly<Record<string, number>>;
  /** Thresholds per MCP tool (`search: 0.8`); side-effect tools never match semantically. */
  tools?: Readonly<Record<string, number>>;
  /** Embedding similarity through an OpenAI-compatible endpoint; off unless set. */
  embeddings?: EmbeddingsOptions | undefined;
}

export const DEFAULT_THRESHOLD = 0.85;
/** Scoring gives the event loop back after this long, so other requests are not held up by a long comparison. */
const SLICE_MS = 4;

const NORMALISED = 'same request once letter case, whitespace, punctuation, contractions, key order and per-run noise are set aside';

/** Same request after normalisation: O(1) in the request's bucket. */
export function normalisedStage(index: SemanticIndex): MatchStage {
  return {
    name: 'normalised',
    find(req) {
      const view = index.viewOf(req);
      if (view === undefined) return undefined;
      const bucket = index.bucketOf(view);
      if (bucket === undefined) return undefined;
      const same = bucket.byNormalised.get(normalisedKey(view));
      if (same !== undefined) {
        const entry = index.take(same);
        return { exchange: entry.exchange, score: 1, explanation: `${NORMALISED}${asideNote(setAside(entry.view, view))}` };
      }
      const group = bucket.varying?.get(looseKey(view));
      if (group === undefined || !fits(group, slotsOf(view))) return undefined;
      const entry = index.take(group.entries);
      return {
        exchange: entry.exchange,
        score: 1,
        explanation: `same request once identifiers this tape shows varying between runs are set aside${asideNote(setAside(entry.view, view, group))}`,
      };
    },
  };
}

/** An identifier every recording of the group shares must be the same in the request; only the varying ones may differ. */
function fits(group: VaryingGroup, slots: readonly string[]): boolean {
  return slots.length === group.slots.length && group.slots.every((v, k) => v === undefined || v === slots[k]);
}

interface Scored {
  entry: Entry;
  score: number;
  /** Fields that differed, with their scores. */
  fields: string[];
  rejected?: string;
  /** A word that carries meaning was added, dropped or replaced: refused unless embeddings judge the pair. */
  reworded?: string;
  /** For a rejected candidate: how close it was anyway (ranks the closest in the miss note). */
  closeness?: number;
}

/** Field-by-field similarity within the bucket, guarded against changes of meaning. */
export function similarityStage(index: SemanticIndex, opts: SemanticOptions = {}): MatchStage {
  const embedder: Embedder | undefined = opts.embeddings ? createEmbedder(opts.embeddings) : undefined;
  const thresholdFor = (req: IncomingRequest, view: SemanticView): number =>
    (view.tool !== undefined ? opts.tools?.[view.tool] : undefined) ??
    opts.routes?.[req.route] ??
    (embedder ? opts.embeddings?.threshold : undefined) ??
    opts.threshold ??
    DEFAULT_THRESHOLD;

  return {
    name: embedder ? 'similarity+embeddings' : 'similarity',
    async find(req, ctx): Promise<StageHit | undefined> {
      const view = index.viewOf(req);
      if (view === undefined) {
        ctx.notes?.push('similarity: not an LLM or MCP request, so only exact matches apply');
        return undefined;
      }
      const bucket = index.bucketOf(view);
      if (bucket === undefined) {
        ctx.notes?.push('similarity: no recording has the same model, parameters, tools and message structure (those must match exactly)');
        return undefined;
      }
      let scored = await scoreInSlices(index.shortlist(bucket, view), view);
      if (embedder) scored = await withEmbeddings(scored, view, embedder, ctx);
      scored = scored.map(refuseReworded);
      const threshold = thresholdFor(req, view);
      const { best, closest } = pick(scored, threshold, index, ctx);
      if (best === undefined) {
        if (closest !== undefined)
          ctx.notes?.push(
            `similarity: closest #${closest.entry.exchange.id} ${closest.rejected !== undefined ? `rejected (${closest.rejected})` : `scored ${closest.score.toFixed(2)}, below ${threshold}`}`,
          );
        return undefined;
      }
      index.take([best.entry]);
      return {
        exchange: best.entry.exchange,
        score: best.score,
        explanation: `similar to #${best.entry.exchange.id} (score ${best.score.toFixed(3)} >= ${threshold}; ${best.fields.join('; ')})${asideNote(setAside(best.entry.view, view))}`,
      };
    },
  };
}

/** The best candidate at or above the threshold (the least served breaks a tie), and the closest of all for a miss note. */
function pick(
  scored: readonly Scored[],
  threshold: number,
  index: SemanticIndex,
  ctx: StageContext,
): { best: Scored | undefined; closest: Scored | undefined } {
  let best: Scored | undefined;
  let closest: Scored | undefined;
  for (const s of scored) {
    if (closest === undefined || rank(s) > rank(closest)) closest = s;
    // The score held against the threshold, as the note quotes it (the miss report shows it, not another).
    if (s.rejected === undefined) ctx.scores?.set(s.entry.exchange.id, Number(s.score.toFixed(2)));
    if (s.rejected !== undefined || s.score < threshold) continue;
    if (
      best === undefined ||
      s.score > best.score ||
      (s.score === best.score && index.servedCount(s.entry) < index.servedCount(best.entry))
    )
      best = s;
  }
  return { best, closest };
}

/**
 * Score every candidate, giving the event loop back first (the request's own analysis and the exact and normalised
 * stages ran in this turn) and then every few milliseconds.
 */
async function scoreInSlices(entries: readonly Entry[], view: SemanticView): Promise<Scored[]> {
  const out: Scored[] = [];
  await nextTurn();
  let slice = performance.now();
  for (const entry of entries) {
    out.push(scoreEntry(entry, view));
    if (performance.now() - slice > SLICE_MS) {
      await nextTurn();
      slice = performance.now();
    }
  }
  return out;
}

const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

const rank = (s: Scored): number => (s.rejected !== undefined ? -1 + (s.closeness ?? 0) : s.score);

function scoreEntry(entry: Entry, view: SemanticView): Scored {
  let score = 1;
  let reworded: string | undefined;
  const fields: string[] = [];
  for (let i = 0; i < view.fields.length; i++) {
    const a = entry.view.fields[i];
    const b = view.fields[i];
    if (a === undefined || b === undefined) return { entry, score: 0, fields, rejected: 'different structure' };
    if (a.info.normalised === b.info.normalised) continue;
    let s: number;
    if (a.kind === 'arg' && sameAddress(a.text, b.text)) s = 0.95;
    else {
      const c = compareText(a.info, b.info);
      if (c.rejected !== undefined) return { entry, score: 0, closeness: c.closeness, fields, rejected: `${c.rejected} at ${b.path}` };
      s = c.score;
      if (c.reworded !== undefined) reworded ??= `${c.reworded} at ${b.path}`;
      if (c.changes !== undefined && c.changes.length > 0) {
        const shown = c.changes.length > 4 ? [...c.changes.slice(0, 4), `${c.changes.length - 4} more`] : c.changes;
        fields.push(`${b.path} ${s.toFixed(2)}: ${shown.join(', ')}`);
        score = Math.min(score, s);
        continue;
      }
    }
    fields.push(`${b.path} ${s.toFixed(2)}`);
    score = Math.min(score, s);
  }
  return reworded === undefined ? { entry, score, fields } : { entry, score, fields, reworded };
}

/**
 * The built-in word method never serves a pair whose words that carry meaning differ: it cannot tell `sea` /
 * `ocean` from `python` / `rust`. Embeddings, when they scored the pair, have cleared `reworded` already.
 */
function refuseReworded(s: Scored): Scored {
  if (s.reworded === undefined || s.rejected !== undefined) return s;
  const { reworded, ...rest } = s;
  return { ...rest, score: 0, closeness: s.score, rejected: reworded };
}

/** Replace the word-based score of guarded candidates by the embedding cosine of each differing field. */
async function withEmbeddings(scored: Scored[], view: SemanticView, embedder: Embedder, ctx: StageContext): Promise<Scored[]> {
  const pairs: { s: Scored; i: number }[] = [];
  for (const s of scored) {
    if (s.rejected !== undefined) continue;
    view.fields.forEach((f, i) => {
      if (s.entry.view.fields[i]?.info.normalised !== f.info.normalised) pairs.push({ s, i });
    });
  }
  if (pairs.length === 0) return scored;
  const texts = [...new Set(pairs.flatMap(({ s, i }) => [s.entry.view.fields[i]?.text ?? '', view.fields[i]?.text ?? '']))];
  let vectors: Map<string, number[]>;
  try {
    const v = await embedder.embed(texts);
    vectors = new Map(texts.map((t, i) => [t, v[i] as number[]]));
  } catch (err) {
    ctx.notes?.push(`similarity: ${(err as Error).message}; used the built-in word similarity`);
    return scored;
  }
  const byCandidate = new Map<Scored, number>();
  for (const { s, i } of pairs) {
    const c = cosine(vectors.get(s.entry.view.fields[i]?.text ?? '') ?? [], vectors.get(view.fields[i]?.text ?? '') ?? []);
    byCandidate.set(s, Math.min(byCandidate.get(s) ?? 1, c));
  }
  return scored.map((s) => {
    const c = byCandidate.get(s);
    if (c === undefined) return s;
    const { reworded: _judged, ...rest } = s;
    return { ...rest, score: c, fields: [...s.fields, `embedding cosine ${c.toFixed(3)}`] };
  });
}
