import { providerAdapters } from './registry.js';
import type { ApiId, ProviderAdapter } from './types.js';

/**
 * Which LLM API a request is for, asking each adapter in turn: the API family by path (and method), the provider by
 * path and route (chat completions on a route or upstream that names OpenAI is `openai`, elsewhere
 * `openai-compatible`). Undefined for anything else (MCP, plain HTTP).
 */
export function detectLlmApi(route: string, path: string, method: string, upstream?: string): ApiId | undefined {
  const found = detectAdapter(route, path, method, upstream);
  return found === undefined ? undefined : { provider: found.provider, api: found.adapter.api };
}

/** The adapter that reads a request, and the provider it named. */
export function detectAdapter(
  route: string,
  path: string,
  method: string,
  upstream?: string,
): { provider: string; adapter: ProviderAdapter } | undefined {
  const q = path.indexOf('?');
  const target = { route, path: q === -1 ? path : path.slice(0, q), method, upstream };
  for (const adapter of providerAdapters()) {
    const provider = adapter.detect(target);
    if (provider !== undefined) return { provider, adapter };
  }
  return undefined;
}
