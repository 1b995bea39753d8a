/**
 * What an error answer said, in the words a person reads (`HTTP 429 rate_limit_exceeded: Rate limit reached ...`),
 * from the error an API put in its body, in any of the usual shapes: what the timeline shows for a failed call and
 * what the end of a run names.
 */
import { bodyJson } from '../tape/body.js';
import type { Exchange } from '../tape/schema.js';
import { shorten } from './format.js';

/** The error an API put in its body (`{error: {type, code, message}}`, `{error: "..."}`, `{message}`): `code: message`. */
export function bodyError(ex: Pick<Exchange, 'response'>): string | undefined {
  const body = ex.response?.body ? (bodyJson(ex.response.body) as { error?: unknown; message?: unknown } | undefined) : undefined;
  const e = body?.error;
  if (typeof e === 'string') return e;
  if (e !== null && typeof e === 'object') {
    const o = e as { type?: unknown; code?: unknown; status?: unknown; message?: unknown };
    const kind = [o.code, o.type, o.status].find((x) => typeof x === 'string');
    const message = typeof o.message === 'string' ? o.message : undefined;
    return [kind, message].filter((x) => x !== undefined).join(': ') || undefined;
  }
  return typeof body?.message === 'string' ? body.message : undefined;
}

/** `HTTP 429 rate_limit_exceeded: Rate limit reached ...` for an answer with an error status; undefined otherwise. */
export function httpErrorText(ex: Pick<Exchange, 'response' | 'llm'>, max = 120): string | undefined {
  const status = ex.response?.status;
  if (status === undefined || status < 400) return undefined;
  const said = bodyError(ex) ?? ex.llm?.errorType;
  return `HTTP ${status}${said ? ` ${shorten(said, max)}` : ''}`;
}
