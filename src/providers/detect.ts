import type { ApiId } from './types.js';

/**
 * Which LLM API a request is for, from its path (and route): the API family by path, the provider by route.
 * Chat completions, responses, embeddings and completions are OpenAI's when the route or upstream names OpenAI
 * (`/openai`, `api.openai.com`), and `openai-compatible` otherwise (local model servers, gateways).
 */
export function detectLlmApi(route: string, path: string, method: string, upstream?: string): ApiId | undefined {
  if (method !== 'POST') return undefined;
  const p = path.split('?')[0] ?? path;
  if (/\/models\/[^/:]+:(stream)?generateContent$/i.test(p)) return { provider: 'gemini', api: 'generateContent' };
  if (/(^|\/)v1\/messages$/.test(p) || (/\/messages$/.test(p) && /anthropic/i.test(route + (upstream ?? ''))))
    return { provider: 'anthropic', api: 'messages' };
  const openai = /openai/i.test(route) || /api\.openai\.com/i.test(upstream ?? '') ? 'openai' : 'openai-compatible';
  if (/\/chat\/completions$/.test(p)) return { provider: openai, api: 'chat.completions' };
  if (/\/responses$/.test(p)) return { provider: openai, api: 'responses' };
  if (/\/embeddings$/.test(p)) return { provider: openai, api: 'embeddings' };
  if (/\/completions$/.test(p)) return { provider: openai, api: 'completions' };
  return undefined;
}
