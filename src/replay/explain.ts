import { bodyJson, bodyText } from '../tape/body.js';
import type { Exchange } from '../tape/schema.js';
import { secretQueryMatcher } from '../tape/redaction/secret-query.js';
import { REDACTED_PLACEHOLDER, type SecretDetector } from '../tape/redaction/secrets.js';
import { stripFields, DEFAULT_IGNORED_FIELDS, DEFAULT_SECRETS, withoutSecrets, type KeyedRequest } from './exact-key.js';

export interface Candidate {
  exchange: Exchange;
  /** Similarity in [0,1]; 1 is identical. */
  score: number;
  /** Human-readable differences, e.g. `body.messages[1].content: "Paris" vs "Rome"`. */
  differences: string[];
}

const MAX_DIFFS = 6;

export interface ExplainOptions {
  /** The detector the tape was written with (config `redact`). Default: the built-in rules. */
  secrets?: SecretDetector;
  /** Extra secret query parameter names (config `redact.query`). */
  secretQuery?: readonly string[];
  /** Body fields the exact key leaves out (config `match.ignoreFields`): not differences. Default: {@link DEFAULT_IGNORED_FIELDS}. */
  ignoreFields?: readonly string[];
  /** Query parameters the exact key leaves out (config `match.ignoreQuery`): not differences. */
  ignoreQuery?: readonly string[];
}

/**
 * Rank recorded exchanges by how close their request is to `req`, and say what differed (method, path, query,
 * and the body field by field). Used for miss reports; cheap enough for a miss, never run on a hit.
 * A miss report goes to the client and onto the replay tape, so it quotes redacted values only: secret query
 * parameters, and secrets in paths and bodies (by field name or by shape), from the incoming request and the
 * recorded ones alike, are shown as `[REDACTED]`.
 */
export function explainCandidates(
  req: KeyedRequest,
  exchanges: readonly Exchange[],
  limit: number,
  opts: ExplainOptions = {},
): Candidate[] {
  const explainer = candidateExplainer(req, opts);
  const scored: Candidate[] = [];
  for (const ex of exchanges) explainer.add(ex, scored);
  return closestOf(scored, limit);
}

/** Slices of a miss report: it gives the event loop back every few milliseconds (long recordings take a while). */
const SLICE_MS = 4;

/** `explainCandidates` a few milliseconds at a time, so a miss among long recordings never holds other requests up. */
export async function explainCandidatesInSlices(
  req: KeyedRequest,
  exchanges: readonly Exchange[],
  limit: number,
  opts: ExplainOptions = {},
): Promise<Candidate[]> {
  // A turn of the event loop first: the stages that missed ran in this one.
  await nextTurn();
  const explainer = candidateExplainer(req, opts);
  const scored: Candidate[] = [];
  let slice = performance.now();
  for (const ex of exchanges) {
    explainer.add(ex, scored);
    if (performance.now() - slice > SLICE_MS) {
      await nextTurn();
      slice = performance.now();
    }
  }
  return closestOf(scored, limit);
}

const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

function closestOf(scored: Candidate[], limit: number): Candidate[] {
  return scored.sort((a, b) => b.score - a.score).slice(0, limit);
}

/** What the request looks like in a miss report, computed once, and how one recording is compared with it. */
function candidateExplainer(req: KeyedRequest, opts: ExplainOptions): { add(ex: Exchange, out: Candidate[]): void } {
  const secrets = opts.secrets ?? DEFAULT_SECRETS;
  const secretQuery = secretQueryMatcher(opts.secretQuery);
  const ignoredQuery = new Set((opts.ignoreQuery ?? []).map((q) => q.toLowerCase()));
  const ignoreFields = opts.ignoreFields ?? DEFAULT_IGNORED_FIELDS;
  const shownQuery = (q: readonly (readonly [string, string])[]): string =>
    JSON.stringify(
      q
        .filter(([k]) => !ignoredQuery.has(k.toLowerCase()))
        .map(([k, v]) => [k, secretQuery(k) ? REDACTED_PLACEHOLDER : withoutSecrets(v, secrets)])
        .sort(),
    );
  const shownBody = (ex: { request: { body: Exchange['request']['body'] } }): unknown =>
    secrets.canonical(stripFields(bodyJson(ex.request.body) ?? bodyText(ex.request.body), ignoreFields));
  const seen = new Set<string>();
  const reqBody = shownBody(req);
  const reqPath = withoutSecrets(req.request.path, secrets);
  const reqQuery = shownQuery(req.request.query);
  // Word sets of the texts compared: the request's are compared with every recording's, so each is made once.
  const wordSets = new Map<string, Set<string>>();
  return {
    add(ex, out) {
      const differences: string[] = [];
      let total = 3;
      let same = 0;
      if (ex.request.method === req.request.method) same++;
      else differences.push(`method: ${ex.request.method} vs ${req.request.method}`);
      const exPath = withoutSecrets(ex.request.path, secrets);
      if (exPath === reqPath) same++;
      else differences.push(`path: ${exPath} vs ${reqPath}`);
      const q1 = shownQuery(ex.request.query);
      if (q1 === reqQuery) same++;
      else differences.push(`query: ${short(q1)} vs ${short(reqQuery)}`);
      const leaves = { total: 0, same: 0 };
      diffValues(shownBody(ex), reqBody, 'body', differences, leaves, wordSets);
      total += leaves.total;
      same += leaves.same;
      const fingerprint = differences.join('\n') + ex.request.path;
      if (seen.has(fingerprint)) return;
      seen.add(fingerprint);
      const shown =
        differences.length > MAX_DIFFS
          ? [...differences.slice(0, MAX_DIFFS), `... and ${differences.length - MAX_DIFFS} more`]
          : differences;
      out.push({ exchange: ex, score: total === 0 ? 0 : Math.round((same / total) * 1000) / 1000, differences: shown });
    },
  };
}

/**
 * The candidates of a miss with one score each: where a matching stage scored a recording against its threshold (the
 * similarity stage's `scored 0.81, below 0.85`), that score, the one that decided; else the share of request fields
 * that are alike. A miss report that quoted both would give two different scores for the same recording.
 */
export function withStageScores(candidates: Candidate[], scores: ReadonlyMap<string, number> | undefined): Candidate[] {
  if (scores === undefined || scores.size === 0) return candidates;
  return candidates.map((c) => {
    const score = scores.get(c.exchange.id);
    return score === undefined ? c : { ...c, score };
  });
}

/** Word overlap of two strings in [0,1]: partial credit, so "capital of France" is closer to "capital of Spain" than "count" is. */
function textSimilarity(a: string, b: string, sets: Map<string, Set<string>>): number {
  const wordsOf = (s: string): Set<string> => {
    let set = sets.get(s);
    if (set === undefined)
      sets.set(
        s,
        (set = new Set(
          sample(s)
            .toLowerCase()
            .match(/[\p{L}\p{N}]+/gu) ?? [],
        )),
      );
    return set;
  };
  const wa = wordsOf(a);
  const wb = wordsOf(b);
  if (wa.size === 0 && wb.size === 0) return 0;
  let both = 0;
  for (const w of wa) if (wb.has(w)) both++;
  return both / (wa.size + wb.size - both);
}

/** Walk two JSON values; count leaves and record `path: recorded vs incoming` for each difference. */
function diffValues(
  a: unknown,
  b: unknown,
  path: string,
  out: string[],
  leaves: { total: number; same: number },
  sets: Map<string, Set<string>>,
): void {
  if (isObject(a) && isObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diffValues(a[k], b[k], `${path}.${k}`, out, leaves, sets);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) diffValues(a[i], b[i], `${path}[${i}]`, out, leaves, sets);
    return;
  }
  leaves.total++;
  if (a === b || (typeof a !== 'string' && JSON.stringify(a) === JSON.stringify(b))) {
    leaves.same++;
    return;
  }
  if (typeof a === 'string' && typeof b === 'string') leaves.same += textSimilarity(a, b, sets) * 0.9;
  out.push(`${path}: ${a === undefined ? '(absent)' : shownValue(a)} vs ${b === undefined ? '(absent)' : shownValue(b)}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function short(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** A long text's start and end: enough to rank candidates by shared words, in bounded time. */
function sample(s: string): string {
  return s.length <= 4000 ? s : `${s.slice(0, 2000)} ${s.slice(-2000)}`;
}

/** A value as JSON, cut to a line (a long string is cut before it is serialised). */
function shownValue(v: unknown): string {
  return short(JSON.stringify(typeof v === 'string' && v.length > 100 ? `${v.slice(0, 100)}` : v));
}
