/**
 * The semantic stages of the matching pipeline, run after an exact miss:
 * - `normalised`: the same request once case, whitespace, punctuation, contractions, JSON key order and per-run
 *   noise (timestamps, UUIDs, request ids, call ids, `user`, `metadata`) are set aside. O(1), score 1.
 * - `similarity`: the same bucket (see `view.ts`: every parameter equal) and every text field similar enough,
 *   compared field by field, with changes to numbers, names, negations, quantities and times rejected outright.
 *   Without embeddings only function words and spelling variants may differ: any other word added, dropped or
 *   replaced is refused (a word method cannot tell a synonym from another question); with embeddings, the cosine
 *   judges those.
 * Both only look at recordings in the request's bucket; similarity shortlists them through a word index, so a tape
 * of 100,000 exchanges still answers a miss in milliseconds.
 */
import type { Exchange } from '../../tape/schema.js';
import type { ExactKeyOptions } from '../exact-key.js';
import type { IncomingRequest, MatchStage, StageContext, StageHit } from '../matcher.js';
import { cosine, createEmbedder, type Embedder, type EmbeddingsOptions } from './embeddings.js';
import { analyzeText, compareText, sameAddress, type TextInfo } from './text.js';
import { semanticView, type SemanticView } from './view.js';

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
/** Buckets larger than this are shortlisted through the word index instead of scored in full. */
const SCAN_ALL = 64;
const SHORTLIST = 24;
/** Postings read per lookup, rarest words first. */
const POSTINGS_BUDGET = 20_000;

interface Entry {
  exchange: Exchange;
  view: SemanticView;
  normalised: string;
}

interface Bucket {
  entries: Entry[];
  byNormalised: Map<string, Entry[]>;
  /** word -> entries containing it (built on the first similarity lookup in a large bucket). */
  postings?: Map<string, number[]>;
  /** Scratch counters for `shortlist`, one per entry, all zero between lookups. */
  counts?: Uint32Array;
  /** For a family: its one bucket when it has only one (same entries in the same order, so the same postings). */
  sole?: Bucket | null;
}

function postingsOf(b: Bucket): Map<string, number[]> {
  return (b.postings ??= b.sole ? postingsOf(b.sole) : buildPostings(b.entries));
}

/** The shared index both stages read: built on the first lookup, so a tape replayed exactly never pays for it. */
export class SemanticIndex {
  private buckets: Map<string, Bucket> | undefined;
  /** Every entry by method, route, path and query, whatever its parameters: where a miss looks for the closest. */
  private families: Map<string, Bucket> | undefined;
  private readonly views = new WeakMap<IncomingRequest, SemanticView | null>();
  /** Shortlists already computed for a request's view, per bucket. */
  private readonly shortlists = new WeakMap<SemanticView, Map<Bucket, Entry[]>>();
  /** How many times each recording was served by a semantic stage (the least served wins a tie). */
  private readonly served = new Map<Exchange, number>();

  /** Texts analysed once per tape: a system prompt shared by 10,000 requests is tokenised once. */
  private readonly texts = new Map<string, TextInfo>();
  private readonly analyze = (text: string): TextInfo => {
    let info = this.texts.get(text);
    if (info === undefined) this.texts.set(text, (info = analyzeText(text)));
    return info;
  };

  constructor(
    private readonly exchanges: readonly Exchange[],
    private readonly keyOptions: ExactKeyOptions = {},
  ) {}

  /** Build now (load time) instead of on the first miss. */
  build(): void {
    if (this.buckets !== undefined) return;
    this.buckets = new Map();
    this.families = new Map();
    for (const ex of this.exchanges) {
      if (ex.response === undefined && ex.error === undefined && ex.mcp === undefined) continue;
      const view = semanticView(ex, this.keyOptions, this.analyze);
      if (view === undefined) continue;
      const entry: Entry = { exchange: ex, view, normalised: normalisedKey(view) };
      let b = this.buckets.get(view.bucket);
      if (b === undefined) this.buckets.set(view.bucket, (b = { entries: [], byNormalised: new Map() }));
      b.entries.push(entry);
      const family = view.bucket.slice(0, view.bucket.indexOf('\n'));
      let f = this.families.get(family);
      if (f === undefined) this.families.set(family, (f = { entries: [], byNormalised: new Map() }));
      f.entries.push(entry);
      f.sole = f.sole === undefined || f.sole === b ? b : null;
      const same = b.byNormalised.get(entry.normalised);
      if (same) same.push(entry);
      else b.byNormalised.set(entry.normalised, [entry]);
    }
  }

  /** Build everything now, word indexes of large buckets included, so that no lookup pays for building (replay start). */
  warm(): void {
    this.build();
    for (const b of [...(this.buckets?.values() ?? []), ...(this.families?.values() ?? [])]) if (b.entries.length > SCAN_ALL) postingsOf(b);
  }

  viewOf(req: IncomingRequest): SemanticView | undefined {
    let v = this.views.get(req);
    if (v === undefined) this.views.set(req, (v = semanticView(req, this.keyOptions) ?? null));
    return v ?? undefined;
  }

  bucketOf(view: SemanticView): Bucket | undefined {
    this.build();
    return this.buckets?.get(view.bucket);
  }

  /**
   * The recordings closest to `req` for a miss report, found through the index (so a miss stays fast on a large
   * tape): its bucket's shortlist and the shortlist of every recording on the same method, route and path (the
   * same question asked of another model is the most telling candidate). Undefined without a semantic view.
   */
  nearest(req: IncomingRequest): Exchange[] | undefined {
    const view = this.viewOf(req);
    if (view === undefined) return undefined;
    this.build();
    const bucket = this.buckets?.get(view.bucket);
    const family = this.families?.get(view.bucket.slice(0, view.bucket.indexOf('\n')));
    const near = new Set<Exchange>();
    for (const b of [bucket, family]) if (b !== undefined) for (const e of this.shortlist(b, view)) near.add(e.exchange);
    return [...near];
  }

  /** The least-served entry of a list (recording order breaks ties), counted as served. */
  take(entries: readonly Entry[]): Entry {
    let best = entries[0] as Entry;
    for (const e of entries) if ((this.served.get(e.exchange) ?? 0) < (this.served.get(best.exchange) ?? 0)) best = e;
    this.served.set(best.exchange, (this.served.get(best.exchange) ?? 0) + 1);
    return best;
  }

  servedCount(e: Entry): number {
    return this.served.get(e.exchange) ?? 0;
  }

  /**
   * Entries of a bucket worth scoring for `view`: all of a small bucket, else the SHORTLIST sharing the most of its
   * words, rarest words first (ties: recording order). Remembered per request view, so a miss report reuses the
   * similarity stage's shortlist.
   */
  shortlist(bucket: Bucket, view: SemanticView): Entry[] {
    if (bucket.entries.length <= SCAN_ALL) return bucket.entries;
    let byBucket = this.shortlists.get(view);
    const known = byBucket?.get(bucket);
    if (known !== undefined) return known;
    const postings = postingsOf(bucket);
    const lists = [...new Set(view.fields.flatMap((f) => f.info.words))]
      .map((w) => postings.get(w))
      .filter((p): p is number[] => p !== undefined)
      .sort((a, b) => a.length - b.length);
    // Count shared words per entry in a reused typed array (a Map per lookup cost most of a miss on 100k entries).
    const counts = (bucket.counts ??= new Uint32Array(bucket.entries.length));
    const touched: number[] = [];
    let read = 0;
    let max = 0;
    for (const list of lists) {
      if (read > 0 && read + list.length > POSTINGS_BUDGET) break;
      read += list.length;
      for (const i of list) {
        const c = ++counts[i]!;
        if (c === 1) touched.push(i);
        if (c > max) max = c;
      }
    }
    // Best counts first, recording order within a count: group by count instead of sorting every touched entry.
    const levels: number[][] = Array.from({ length: max + 1 }, () => []);
    for (const i of touched) {
      levels[counts[i]!]!.push(i);
      counts[i] = 0;
    }
    const out: Entry[] = [];
    for (let c = max; c > 0 && out.length < SHORTLIST; c--) {
      const level = levels[c]!.sort((a, b) => a - b);
      for (const i of level) {
        if (out.length === SHORTLIST) break;
        out.push(bucket.entries[i] as Entry);
      }
    }
    if (byBucket === undefined) this.shortlists.set(view, (byBucket = new Map()));
    byBucket.set(bucket, out);
    return out;
  }
}

function buildPostings(entries: readonly Entry[]): Map<string, number[]> {
  const postings = new Map<string, number[]>();
  entries.forEach((e, i) => {
    for (const w of new Set(e.view.fields.flatMap((f) => f.info.words))) {
      const list = postings.get(w);
      if (list) list.push(i);
      else postings.set(w, [i]);
    }
  });
  return postings;
}

function normalisedKey(view: SemanticView): string {
  return view.fields.map((f) => f.info.normalised).join('\u0001');
}

/** Same request after normalisation: O(1) in the request's bucket. */
export function normalisedStage(index: SemanticIndex): MatchStage {
  return {
    name: 'normalised',
    find(req) {
      const view = index.viewOf(req);
      if (view === undefined) return undefined;
      const same = index.bucketOf(view)?.byNormalised.get(normalisedKey(view));
      if (same === undefined) return undefined;
      const entry = index.take(same);
      return {
        exchange: entry.exchange,
        score: 1,
        explanation:
          'same request once case, whitespace, punctuation, key order and per-run noise (ids, timestamps, user, metadata) are set aside',
      };
    },
  };
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
      let scored = index.shortlist(bucket, view).map((entry) => scoreEntry(entry, view));
      if (embedder) scored = await withEmbeddings(scored, view, embedder, ctx);
      scored = scored.map(refuseReworded);
      const threshold = thresholdFor(req, view);
      let best: Scored | undefined;
      let closest: Scored | undefined;
      for (const s of scored) {
        if (closest === undefined || rank(s) > rank(closest)) closest = s;
        // The score held against the threshold, as the note below quotes it (the miss report shows it, not another).
        if (s.rejected === undefined) ctx.scores?.set(s.entry.exchange.id, Number(s.score.toFixed(2)));
        if (s.rejected !== undefined || s.score < threshold) continue;
        if (
          best === undefined ||
          s.score > best.score ||
          (s.score === best.score && index.servedCount(s.entry) < index.servedCount(best.entry))
        )
          best = s;
      }
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
        explanation: `similar to #${best.entry.exchange.id} (score ${best.score.toFixed(3)} >= ${threshold}; ${best.fields.join('; ')})`,
      };
    },
  };
}

const rank = (s: Scored): number => (s.rejected !== undefined ? -1 + (s.closeness ?? 0) : s.score);

/** Share of words two views have in common (Dice), to rank rejected candidates in miss notes. */
function wordOverlap(a: SemanticView, b: SemanticView): number {
  const wa = new Set(a.fields.flatMap((f) => f.info.words));
  const wb = new Set(b.fields.flatMap((f) => f.info.words));
  let both = 0;
  for (const w of wa) if (wb.has(w)) both++;
  return wa.size + wb.size === 0 ? 0 : (2 * both) / (wa.size + wb.size);
}

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
      if (c.rejected !== undefined)
        return { entry, score: 0, closeness: wordOverlap(entry.view, view), fields, rejected: `${c.rejected} at ${b.path}` };
      s = c.score;
      if (c.reworded !== undefined) reworded ??= `${c.reworded} at ${b.path}`;
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
