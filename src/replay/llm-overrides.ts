/**
 * Modified replay: rewrite an LLM request on the wire (model, system prompt, temperature, max tokens) so that an
 * unchanged agent runs against a different configuration. Each API's adapter knows where it keeps these.
 */
import { adapterFor } from '../providers/registry.js';
import type { ApiId, Json, LlmOverrides, Rewritten } from '../providers/types.js';

export type { LlmOverrides, Rewritten };

/** Apply the overrides to a parsed request body of the given API. Returns a new body; the input is untouched. */
export function applyOverrides(api: ApiId, path: string, input: Json, overrides: LlmOverrides): Rewritten {
  const body = structuredClone(input);
  const adapter = adapterFor(api.api);
  return adapter === undefined ? { body, path, applied: {} } : adapter.applyOverrides(body, path, overrides, api.provider);
}
