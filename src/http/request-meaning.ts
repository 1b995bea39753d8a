/**
 * What an incoming request means, computed once per request and carried on it (`ProxyRequest.meaning`): the request
 * as the tape records it, and, for an LLM call, its request-side meaning (provider, API, model, parameters, streamed)
 * as detected with the route's upstream, as the recorder detected it. Replay responders (`--llm live`) and the
 * replayer's matching read the same answer instead of detecting the API again with other arguments.
 */
import { requestSideLlm } from '../providers/describe.js';
import { encodeWireBody } from '../tape/body.js';
import type { ProxyRequest, RequestMeaning } from './types.js';
import type { Body } from '../tape/schema.js';

export type { RequestMeaning } from './types.js';

export function requestMeaning(req: ProxyRequest): RequestMeaning {
  if (req.meaning !== undefined) return req.meaning;
  const wire = req.large === undefined ? encodeWireBody(req.body, req.headers['content-type']) : undefined;
  const record = {
    method: req.method,
    path: req.path,
    query: req.query,
    headers: req.headers,
    body: req.large?.body ?? (wire?.body as Body),
  };
  const llm = requestSideLlm(req.route.prefix, record, req.route.upstream);
  const meaning: RequestMeaning = llm === undefined ? { record } : { record, api: { provider: llm.provider, api: llm.api }, llm };
  if (wire?.text !== undefined) meaning.bodyText = { of: record.body, text: wire.text };
  req.meaning = meaning;
  return meaning;
}
