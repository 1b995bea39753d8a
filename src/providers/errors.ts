import type { ApiId } from './types.js';

const GEMINI_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/**
 * An error body in the provider's own shape, so the official SDKs surface it as a normal API error.
 * OpenAI: `{error:{message,type,param,code}}`; Anthropic: `{type:"error",error:{type,message}}`;
 * Gemini: `{error:{code,message,status}}`; unknown APIs: `{error:{type,message}}`. `extra` is merged in at the
 * top level (e.g. `tapedeck: {...}` details), which the SDKs ignore.
 */
export function providerErrorBody(
  api: ApiId | undefined,
  status: number,
  type: string,
  message: string,
  extra: Record<string, unknown> = {},
): unknown {
  switch (api?.provider) {
    case 'anthropic':
      return { type: 'error', error: { type, message }, ...extra };
    case 'gemini':
      return { error: { code: status, message, status: GEMINI_STATUS[status] ?? 'UNKNOWN' }, ...extra };
    case 'openai':
    case 'openai-compatible':
      return { error: { message, type, param: null, code: type }, ...extra };
    default:
      return { error: { type, message }, ...extra };
  }
}
