import type { ApiId } from './index.js';

/**
 * An error body in the provider's own shape, so the official SDKs surface it as a normal API error.
 * OpenAI: `{error:{message,type,param,code}}`; Anthropic: `{type:"error",error:{type,message}}`;
 * Gemini: `{error:{code,message,status}}`; unknown APIs: `{error:{type,message}}`. `extra` is merged in.
 */
export function providerErrorBody(_api: ApiId | undefined, _status: number, type: string, message: string, extra: Record<string, unknown> = {}): unknown {
  return { error: { type, message, ...extra } }; // providers helper: implement per provider
}
