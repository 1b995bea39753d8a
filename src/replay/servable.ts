/**
 * Which recordings replay serves: the upstream's answers only. An answer a fault rule injected while recording
 * (`match.kind: "fault"`), and an answer tapedeck made itself because the upstream gave none (unreachable, refused, a
 * timeout, tapedeck stopping: `error.phase` before any response, `notes.answeredBy: "tapedeck"`), are on the tape as
 * what the client got, never served as a recording: a replay of the run gets the fault again from its rule, or the
 * miss says why (re-record the tape). A replay tape's own misses and blocked calls are tapedeck's answers too.
 */
import type { Exchange } from '../tape/schema.js';
import type { IncomingRequest, Matcher } from './matcher.js';

/** Why a recorded exchange is not the upstream's answer, or undefined when it is. */
export function notTheUpstreams(ex: Exchange): string | undefined {
  const kind = ex.match?.kind;
  if (kind === 'fault') return `its answer was injected by a fault rule (${ex.notes?.fault ?? ex.match?.reason ?? 'a fault'})`;
  if (kind === 'miss' || kind === 'blocked') return `its answer is tapedeck's own ${kind === 'miss' ? 'miss' : 'refusal of a side effect'}`;
  return tapedecksOwnError(ex);
}

/**
 * Why a recorded answer is an error tapedeck made when the upstream gave none (unreachable, refused, a timeout,
 * tapedeck stopping), or undefined. Unlike an injected fault (which its rule injects again), such an answer means the
 * recording is not done: `serve --mode auto` records the tape again.
 */
export function tapedecksOwnError(ex: Exchange): string | undefined {
  if (ex.transport === 'websocket' || ex.response === undefined) return undefined;
  if (ex.notes?.answeredBy !== 'tapedeck' && ex.error?.phase !== 'connect' && ex.error?.phase !== 'response') return undefined;
  const why = ex.error === undefined ? 'the upstream gave no answer' : `${ex.error.code}: ${ex.error.message}`;
  return `its answer is tapedeck's own error, made when the upstream gave none (${why})`;
}

/** A tape's exchanges split into those replay serves and those it does not (with why). */
export function servableExchanges(exchanges: readonly Exchange[]): {
  served: readonly Exchange[];
  unserved: { exchange: Exchange; why: string }[];
} {
  const unserved: { exchange: Exchange; why: string }[] = [];
  for (const ex of exchanges) {
    const why = notTheUpstreams(ex);
    if (why !== undefined) unserved.push({ exchange: ex, why });
  }
  if (unserved.length === 0) return { served: exchanges, unserved };
  const not = new Set(unserved.map((u) => u.exchange));
  return { served: exchanges.filter((ex) => !not.has(ex)), unserved };
}

/**
 * Why a request the matcher missed has no answer to serve, when the tape holds one for it that is not the upstream's
 * (the same request, by the matcher's exact key): said in the miss, so the user knows to record it again.
 */
export function unservedReasons(
  matcher: Pick<Matcher, 'key'>,
  unserved: readonly { exchange: Exchange; why: string }[],
): ((req: IncomingRequest) => string | undefined) | undefined {
  if (unserved.length === 0) return undefined;
  let byKey: Map<string, { exchange: Exchange; why: string }> | undefined;
  return (req) => {
    byKey ??= new Map(unserved.map((u) => [matcher.key(u.exchange), u] as const));
    const found = byKey.get(matcher.key(req));
    return found === undefined
      ? undefined
      : `the tape's recording of this request (#${found.exchange.id}) is not served: ${found.why}; record it again`;
  };
}
