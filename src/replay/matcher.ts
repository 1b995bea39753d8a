/**
 * The matching pipeline: given an incoming request, find the recorded exchange to answer it with.
 * Stages run in order and stop at the first hit: exact key (O(1)), then the semantic stages (normalised,
 * similarity) registered through `stages`. Every outcome explains itself; a miss lists the closest candidates.
 * Matching knows no sockets: it works on exchanges, so the proxy and the library API share it.
 */
import type { Exchange } from '../tape/schema.js';
import { isTokenChallenge } from '../providers/oauth.js';
import { exactKey, type ExactKeyOptions, type KeyedRequest } from './exact-key.js';
import { explainCandidates, withStageScores, type Candidate, type ExplainOptions } from './explain.js';

/** An incoming request in tape terms, with the request-side meaning (model, tool name) when known. */
export type IncomingRequest = KeyedRequest & Partial<Pick<Exchange, 'transport' | 'llm' | 'mcp'>>;

export type { Candidate };

export type MatchOutcome =
  | { kind: 'exact' | 'semantic'; exchange: Exchange; stage: string; score: number; explanation: string }
  | { kind: 'miss'; candidates: Candidate[]; explanation: string };

/** A semantic stage: looks for a match after the exact key missed. */
export interface MatchStage {
  readonly name: string;
  /** Return a hit (exchange and score) or undefined. Must never return an exchange for a request that means something else. */
  find(req: IncomingRequest, ctx: StageContext): Promise<StageHit | undefined> | StageHit | undefined;
}

export interface StageHit {
  exchange: Exchange;
  score: number;
  explanation: string;
}

export interface StageContext {
  /** Whether semantic matching is allowed for this request (false for side-effect tools). */
  allowSemantic: boolean;
  /** Where stages say why they did not match (the closest they saw and what ruled it out); shown on a miss. */
  notes?: string[];
  /**
   * The score a stage gave each recording it held against its threshold, by exchange id, as its note quotes it: a miss
   * report shows these for those recordings, not a second measure of its own.
   */
  scores?: Map<string, number>;
}

export interface MatcherOptions extends ExactKeyOptions {
  /** When the recorded answers for a key run out: repeat the last one (default) or miss. */
  whenExhausted?: 'repeat-last' | 'miss';
  /** Semantic stages, run in order after an exact miss. */
  stages?: readonly MatchStage[];
  /** Produces the closest candidates for a miss report. Default: same route and path, by body similarity. */
  explainMiss?: (req: IncomingRequest, exchanges: readonly Exchange[]) => Candidate[] | Promise<Candidate[]>;
}

export interface Matcher {
  /** Find the answer for `req`. Consumes one answer from its key's queue (the Nth identical request gets the Nth answer). */
  match(req: IncomingRequest, opts?: Partial<StageContext>): Promise<MatchOutcome>;
  /** The exact key of a request, as the matcher computes it. */
  key(req: KeyedRequest): string;
}

export function createMatcher(exchanges: readonly Exchange[], options: MatcherOptions = {}): Matcher {
  const whenExhausted = options.whenExhausted ?? 'repeat-last';
  const stages = options.stages ?? [];
  // Secret query parameters join the ignored ones once, here, not per request.
  const keyOptions: ExactKeyOptions =
    options.secretQuery === undefined ? options : { ...options, ignoreQuery: [...(options.ignoreQuery ?? []), ...options.secretQuery] };
  const key = (req: KeyedRequest): string => exactKey(req, keyOptions);
  const explain = explainOptions(options);
  const closestByPath = (req: IncomingRequest, all: readonly Exchange[]): Candidate[] =>
    explainCandidates(
      req,
      all.filter((ex) => ex.route === req.route),
      3,
      explain,
    );

  // Recorded answers per key, in recording order, with a cursor: undici snapshot-agent style call counting.
  const queues = new Map<string, { list: Exchange[]; next: number }>();
  for (const ex of exchanges) {
    if (ex.response === undefined && ex.error === undefined && ex.mcp === undefined) continue;
    // A protected resource's answer to a request without a token is OAuth's (`transports/oauth/`), never a message's.
    if (isTokenChallenge(ex)) continue;
    const k = key(ex);
    const q = queues.get(k);
    if (q) q.list.push(ex);
    else queues.set(k, { list: [ex], next: 0 });
  }

  return {
    key,
    async match(req, opts = {}) {
      const ctx: StageContext = { allowSemantic: opts.allowSemantic ?? true, notes: [], scores: new Map() };
      const k = key(req);
      const q = queues.get(k);
      if (q !== undefined) {
        if (q.next < q.list.length || whenExhausted === 'repeat-last') {
          const n = Math.min(q.next, q.list.length - 1);
          q.next++;
          const exchange = q.list[n] as Exchange;
          const nth = q.next > q.list.length ? `repeat of the last of ${q.list.length}` : `${q.next} of ${q.list.length}`;
          return { kind: 'exact', exchange, stage: 'exact', score: 1, explanation: `exact key match (answer ${nth})` };
        }
      }
      // A request whose own recorded answers are used up (whenExhausted: miss) is not served them again by a
      // semantic stage: that is what `miss` asked for.
      if (ctx.allowSemantic && q === undefined) {
        for (const stage of stages) {
          const hit = await stage.find(req, ctx);
          if (hit) return { kind: 'semantic', stage: stage.name, ...hit };
        }
      }
      const candidates = withStageScores(await (options.explainMiss ?? closestByPath)(req, exchanges), ctx.scores);
      const exhausted =
        q !== undefined
          ? `all ${q.list.length} recorded answers for this request were already served`
          : 'no recorded request has this exact key';
      const why =
        stages.length === 0 || q !== undefined
          ? []
          : ctx.allowSemantic
            ? (ctx.notes ?? [])
            : ['semantic matching does not apply (a side effect matches exactly or not at all)'];
      return { kind: 'miss', candidates, explanation: [exhausted, ...why].join('; ') };
    },
  };
}

/**
 * What a miss report needs to agree with the exact key and quote only redacted values: the same ignored fields and
 * query parameters, secret rules and secret query names as the key.
 */
export function explainOptions(options: ExactKeyOptions): ExplainOptions {
  return {
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.secretQuery ? { secretQuery: options.secretQuery } : {}),
    ...(options.ignoreFields ? { ignoreFields: options.ignoreFields } : {}),
    ...(options.ignoreQuery ? { ignoreQuery: options.ignoreQuery } : {}),
  };
}

export { explainCandidates };
