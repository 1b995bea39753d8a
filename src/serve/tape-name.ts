/**
 * Which tape a request to `tapedeck serve` goes to: the first path segment `@NAME` (`/@NAME/openai/v1/...`, so an
 * SDK's base URL can carry it; `%2F` in NAME for a tape in a sub-folder), else the `x-tapedeck-tape` header (for
 * clients that cannot change their path, and requests that come through the forward proxy; %-encoded like the path
 * for a name with letters beyond ASCII, which a header cannot carry), else the server's default tape. The path prefix is taken off before routing, the header before the request is recorded or matched.
 */
import type { IncomingMessage } from 'node:http';
import { TapedeckError } from '../errors.js';
import { validateTapeName } from '../tape/paths.js';

export const TAPE_HEADER = 'x-tapedeck-tape';

const PREFIX = /^(https?:\/\/[^/?#]*)?\/@([^/?#]*)(.*)$/i;

export interface TapeChoice {
  tape: string;
  /** The request URL without its `/@NAME` prefix. */
  url: string;
}

/**
 * The tape `req` names, or why it names none (NO_TAPE, or BAD_ARGS for a name that is not a tape name).
 * `addressedToSelf`: false for a request proxied to another origin, whose path is never read as a tape name.
 */
export function chooseTape(req: IncomingMessage, addressedToSelf: boolean, defaultTape?: string): TapeChoice {
  const url = req.url ?? '/';
  const raw = req.headers[TAPE_HEADER];
  const header = Array.isArray(raw) ? raw[0] : raw;
  const m = addressedToSelf ? PREFIX.exec(url) : null;
  if (m !== null) {
    const rest = m[3] ?? '';
    return { tape: tapeName(decode(m[2] ?? '')), url: `${m[1] ?? ''}${rest.startsWith('/') ? rest : `/${rest}`}` };
  }
  if (header !== undefined && header.trim() !== '') return { tape: tapeName(decode(header.trim())), url };
  if (defaultTape !== undefined) return { tape: defaultTape, url };
  const path = url.replace(/^https?:\/\/[^/?#]*/i, '').split('?')[0] ?? '/';
  throw new TapedeckError(
    'NO_TAPE',
    `tapedeck serve: the request for ${path} names no tape: start its path with /@NAME (a base URL such as ` +
      `http://127.0.0.1:8787/@my-test/openai/v1), send the header ${TAPE_HEADER}: NAME, or start serve with --tape NAME as a default`,
    { details: { path } },
  );
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new TapedeckError('BAD_ARGS', `invalid tape name "${segment}" (bad %-encoding)`, { status: 400 });
  }
}

function tapeName(name: string): string {
  if (name === '') throw new TapedeckError('BAD_ARGS', 'an empty tape name: /@NAME/... needs a NAME', { status: 400 });
  return validateTapeName(name);
}
