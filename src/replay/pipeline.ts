/**
 * The replay matching pipeline as one call: exact key, then normalised, then similarity (see `semantic/`).
 * This is what `tapedeck replay` uses, and the library API's entry point for matching outside the proxy:
 *
 *   const matcher = createReplayMatcher(tape.exchanges, { semantic: { threshold: 0.9 } });
 *   const outcome = await matcher.match(incoming);   // exact | semantic (stage, score, source) | miss (closest)
 */
import type { Exchange } from '../tape/schema.js';
import { explainCandidatesInSlices } from './explain.js';
import { createMatcher, explainOptions, type IncomingRequest, type Matcher, type MatcherOptions } from './matcher.js';
import { isTokenChallenge } from '../providers/oauth.js';
import { normalisedStage, SemanticIndex, similarityStage, type SemanticOptions } from './semantic/stages.js';

/** Recordings a miss report compares at most, for requests outside the semantic index. */
const MISS_SCAN = 5000;

export interface ReplayMatcherOptions extends Omit<MatcherOptions, 'stages'> {
  /** Semantic matching settings; `false` for exact matching only. Default: normalised and similarity stages on. */
  semantic?: (SemanticOptions & { enabled?: boolean }) | false;
  /** Build the semantic index at once (load time) instead of on the first exact miss. */
  eager?: boolean;
}

export function createReplayMatcher(all: readonly Exchange[], opts: ReplayMatcherOptions = {}): Matcher {
  const { semantic, eager, ...matcherOpts } = opts;
  // A protected resource's challenge to a request without a token is answered by OAuth's replay, never matched.
  const exchanges = all.some(isTokenChallenge) ? all.filter((ex) => !isTokenChallenge(ex)) : all;
  if (semantic === false || semantic?.enabled === false) return createMatcher(exchanges, matcherOpts);
  const settings: SemanticOptions = { ...semantic };
  const index = new SemanticIndex(exchanges, {
    ...(matcherOpts.ignoreFields ? { ignoreFields: matcherOpts.ignoreFields } : {}),
    ...(matcherOpts.ignoreQuery || matcherOpts.secretQuery
      ? { ignoreQuery: [...(matcherOpts.ignoreQuery ?? []), ...(matcherOpts.secretQuery ?? [])] }
      : {}),
  });
  const explain = explainOptions(matcherOpts);
  if (eager === true) index.warm();
  return createMatcher(exchanges, {
    ...matcherOpts,
    stages: [normalisedStage(index), similarityStage(index, settings)],
    explainMiss:
      matcherOpts.explainMiss ?? ((req, all) => explainCandidatesInSlices(req, index.nearest(req) ?? recentOnRoute(req, all), 3, explain)),
  });
}

/** Without a semantic view (plain HTTP): the most recent recordings on the request's route, bounded. */
function recentOnRoute(req: IncomingRequest, exchanges: readonly Exchange[]): Exchange[] {
  const out: Exchange[] = [];
  for (let i = exchanges.length - 1; i >= 0 && out.length < MISS_SCAN; i--) {
    const ex = exchanges[i] as Exchange;
    if (ex.route === req.route) out.push(ex);
  }
  return out;
}
