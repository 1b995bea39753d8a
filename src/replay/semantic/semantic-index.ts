/**
 * What the semantic stages know of a tape: its recordings grouped by *bucket* (everything that must be equal before
 * any text is compared, `view.ts`), each bucket's normalised keys (O(1) for the normalised stage) and, for a large
 * bucket, a word index that shortlists the recordings worth scoring.
 *
 * It also learns from the tape what varies between runs: recordings of one bucket that are the same once their
 * identifiers (UUIDs, timestamps the text holds outside a system prompt) are set aside, that differ only in those,
 * and whose differing values are each stamped on other requests of the tape too (a run's id, repeated in every
 * request of its run: not one order's id, which only its own request carries), show that a value at that place
 * changes from run to run. An incoming request that is the same apart from those values is served, and the reason
 * names them; a value the recordings all share must still be equal.
 */
import type { Exchange } from '../../tape/schema.js';
import type { ExactKeyOptions } from '../exact-key.js';
import type { IncomingRequest } from '../matcher.js';
import type { Position } from './noise.js';
import { analyzeText, type TextInfo } from './tokens.js';
import { semanticView, type SemanticView } from './view.js';

/** Buckets larger than this are shortlisted through the word index instead of scored in full. */
const SCAN_ALL = 64;
const SHORTLIST = 24;
/** Recordings of a bucket (and of its family) a miss report compares in full: the ones sharing the most words. */
const NEAREST = 8;
/** Postings read per lookup, rarest words first. */
const POSTINGS_BUDGET = 20_000;

export interface Entry {
  exchange: Exchange;
  view: SemanticView;
  normalised: string;
}

/** Recordings of a bucket alike once their identifiers are set aside, and which of those identifiers vary. */
export interface VaryingGroup {
  entries: Entry[];
  /** Per identifier slot (in field order): its value when every recording has the same, undefined when it varies. */
  slots: (string | undefined)[];
}

export interface Bucket {
  entries: Entry[];
  byNormalised: Map<string, Entry[]>;
  /** Loose key (identifiers as placeholders) -> recordings that show an identifier varying there. */
  varying?: Map<string, VaryingGroup>;
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

export function normalisedKey(view: SemanticView): string {
  return view.fields.map((f) => f.info.normalised).join('\u0001');
}

/** The key with every identifier kept as meaning replaced by its placeholder. */
export function looseKey(view: SemanticView): string {
  return view.fields.map((f) => f.info.loose).join('\u0001');
}

/** The identifiers of a view, in field order: the slots a varying group compares. */
export function slotsOf(view: SemanticView): string[] {
  return view.fields.flatMap((f) => f.info.kept.map((v) => v.value.toLowerCase()));
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

  /** Texts analysed once per tape and position: a system prompt shared by 10,000 requests is tokenised once. */
  private readonly texts = new Map<Position, Map<string, TextInfo>>();
  private readonly analyze = (text: string, position: Position): TextInfo => {
    let byText = this.texts.get(position);
    if (byText === undefined) this.texts.set(position, (byText = new Map()));
    let info = byText.get(text);
    if (info === undefined) byText.set(text, (info = analyzeText(text, position)));
    return info;
  };

  constructor(
    private readonly exchanges: readonly Exchange[],
    private readonly keyOptions: ExactKeyOptions = {},
  ) {}

  /** Build now (load time) instead of on the first miss. */
  build(): void {
    if (this.buckets !== undefined) return;
    const buckets = new Map<string, Bucket>();
    const families = new Map<string, Bucket>();
    for (const ex of this.exchanges) {
      if (ex.response === undefined && ex.error === undefined && ex.mcp === undefined) continue;
      const view = semanticView(ex, this.keyOptions, this.analyze);
      if (view === undefined) continue;
      const entry: Entry = { exchange: ex, view, normalised: normalisedKey(view) };
      let b = buckets.get(view.bucket);
      if (b === undefined) buckets.set(view.bucket, (b = { entries: [], byNormalised: new Map() }));
      b.entries.push(entry);
      const family = view.bucket.slice(0, view.bucket.indexOf('\n'));
      let f = families.get(family);
      if (f === undefined) families.set(family, (f = { entries: [], byNormalised: new Map() }));
      f.entries.push(entry);
      f.sole = f.sole === undefined || f.sole === b ? b : null;
      const same = b.byNormalised.get(entry.normalised);
      if (same) same.push(entry);
      else b.byNormalised.set(entry.normalised, [entry]);
    }
    const stamped = stampedValues(buckets);
    for (const b of buckets.values()) learnVarying(b, stamped);
    this.buckets = buckets;
    this.families = families;
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
   * tape, or among long recordings): the few of its bucket sharing the most words with it, and the few of every
   * recording on the same method, route and path (the same question asked of another model is the most telling
   * candidate). Undefined without a semantic view.
   */
  nearest(req: IncomingRequest): Exchange[] | undefined {
    const view = this.viewOf(req);
    if (view === undefined) return undefined;
    this.build();
    const bucket = this.buckets?.get(view.bucket);
    const family = this.families?.get(view.bucket.slice(0, view.bucket.indexOf('\n')));
    const near = new Set<Exchange>();
    for (const b of [bucket, family]) {
      if (b === undefined) continue;
      const list = b.entries.length <= NEAREST ? b.entries : shortlistOf(b, view, NEAREST);
      for (const e of list) near.add(e.exchange);
    }
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
    const out = shortlistOf(bucket, view);
    if (byBucket === undefined) this.shortlists.set(view, (byBucket = new Map()));
    byBucket.set(bucket, out);
    return out;
  }
}

function shortlistOf(bucket: Bucket, view: SemanticView, limit = SHORTLIST): Entry[] {
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
  for (let c = max; c > 0 && out.length < limit; c--) {
    const level = levels[c]!.sort((a, b) => a - b);
    for (const i of level) {
      if (out.length === limit) break;
      out.push(bucket.entries[i] as Entry);
    }
  }
  return out;
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

/** Identifier -> how many different requests (loose keys) of the tape carry it. */
function stampedValues(buckets: ReadonlyMap<string, Bucket>): Map<string, number> {
  const keys = new Map<string, Set<string>>();
  for (const [name, b] of buckets)
    for (const e of b.entries) {
      const slots = slotsOf(e.view);
      if (slots.length === 0) continue;
      const key = `${name}\u0002${looseKey(e.view)}`;
      for (const v of slots) {
        let set = keys.get(v);
        if (set === undefined) keys.set(v, (set = new Set()));
        set.add(key);
      }
    }
  return new Map([...keys].map(([v, set]) => [v, set.size]));
}

/**
 * Recordings of the bucket that are the same once their identifiers are set aside but differ in them, where each
 * differing value is stamped on another request of the tape as well: the tape shows those identifiers vary from
 * run to run. Kept per loose key, with the slots that vary. A group that differs in a value no other request
 * carries (two orders' ids) is two different requests, and teaches nothing.
 */
function learnVarying(b: Bucket, stamped: ReadonlyMap<string, number>): void {
  const groups = new Map<string, Entry[]>();
  for (const e of b.entries) {
    if (!e.view.fields.some((f) => f.info.kept.length > 0)) continue;
    const loose = looseKey(e.view);
    const group = groups.get(loose);
    if (group) group.push(e);
    else groups.set(loose, [e]);
  }
  for (const [loose, entries] of groups) {
    if (entries.length < 2) continue;
    const all = entries.map((e) => slotsOf(e.view));
    const first = all[0] as string[];
    if (all.some((s) => s.length !== first.length)) continue;
    const slots = first.map((v, k) => (all.every((s) => s[k] === v) ? v : undefined));
    if (!slots.includes(undefined)) continue;
    const runStamps = slots.every((v, k) => v !== undefined || all.every((s) => (stamped.get(s[k] as string) ?? 0) >= 2));
    if (runStamps) (b.varying ??= new Map()).set(loose, { entries, slots });
  }
}
