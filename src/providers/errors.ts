import { adapterFor } from './registry.js';
import type { ApiId } from './types.js';

/**
 * An error body in the API's own shape, so the official SDKs surface it as a normal API error (OpenAI
 * `{error:{message,type,param,code}}`, Anthropic `{type:"error",error:{type,message}}`, Gemini
 * `{error:{code,message,status}}`); anything else gets `{error:{type,message}}`. `extra` is merged in at the top
 * level (e.g. `tapedeck: {...}` details), which the SDKs ignore.
 */
export function providerErrorBody(
  api: ApiId | undefined,
  status: number,
  type: string,
  message: string,
  extra: Record<string, unknown> = {},
): unknown {
  const adapter = adapterFor(api?.api);
  return adapter ? adapter.errorBody(status, type, message, extra) : { error: { type, message }, ...extra };
}
