/**
 * Serve a streamed request from a non-streamed recording and the other way round: `stream` does not change the
 * answer, only its shape. APIs whose adapter knows both shapes (OpenAI chat completions, Anthropic messages) are
 * converted; for the others semantic matching keeps `stream` exact.
 */
import { bodyJson } from '../tape/body.js';
import type { ResponseRecord } from '../tape/schema.js';
import { isObj } from './json.js';
import { adapterFor } from './registry.js';
import type { ApiId } from './types.js';

/** APIs whose responses convert between streamed and not. */
export function streamConvertible(api: ApiId | undefined): boolean {
  return adapterFor(api?.api)?.stream !== undefined;
}

/** Whether a streamed answer to this request body would carry usage. */
export function streamUsageAsked(api: ApiId, request: unknown): boolean {
  return adapterFor(api.api)?.stream?.usageAsked(request) ?? false;
}

/**
 * The recorded response in the shape the request asked for (`stream` true or false), or undefined when it cannot
 * be converted (a body that is not what the API returns). `includeUsage`: whether the stream asked for usage.
 */
export function convertResponse(
  api: ApiId,
  recorded: ResponseRecord,
  wantStream: boolean,
  includeUsage = false,
): ResponseRecord | undefined {
  if (recorded.status >= 400) return recorded; // an error is JSON whichever shape was asked for
  // A stream stored apart (too large for its line) is served as the stream it is, never gathered into one answer.
  if (recorded.eventsFile !== undefined) return wantStream ? recorded : undefined;
  const streamed = recorded.events !== undefined;
  if (streamed === wantStream) return recorded;
  const conversion = adapterFor(api.api)?.stream;
  if (conversion === undefined) return undefined;
  const headers = Object.fromEntries(
    Object.entries(recorded.headers).filter(
      ([k]) => k !== 'content-type' && k !== 'content-length' && k !== 'transfer-encoding' && k !== 'content-encoding',
    ),
  );
  if (wantStream) {
    const json = bodyJson(recorded.body);
    const events = isObj(json) ? conversion.toEvents(json, { includeUsage }) : undefined;
    if (events === undefined) return undefined;
    return {
      status: recorded.status,
      headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
      events,
    };
  }
  const json = conversion.fromEvents((recorded.events ?? []).map((e) => e.data));
  if (json === undefined) return undefined;
  return { status: recorded.status, headers: { ...headers, 'content-type': 'application/json' }, body: { kind: 'json', json } };
}
