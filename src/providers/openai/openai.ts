/**
 * What OpenAI's APIs share (chat completions, responses, completions, embeddings): which provider a request goes to,
 * how usage and errors look. Each API has its own adapter file.
 */
import type { Usage } from '../../tape/schema.js';
import { isObj, num } from '../json.js';
import type { ApiCredential, Json, LlmProvider, OtelRequestParam, ProviderInfo, RequestTarget } from '../types.js';

/** What the OpenAI SDKs read (`OPENAI_API_KEY`, sent as a bearer token), and Azure OpenAI's `api-key` header. */
export const OPENAI_CREDENTIALS: readonly ApiCredential[] = [
  { env: ['OPENAI_API_KEY'], header: 'authorization', scheme: 'bearer' },
  { env: ['AZURE_OPENAI_API_KEY'], header: 'api-key', elsewhere: true },
];

/** OpenAI, shared by its adapters; an OpenAI-compatible server speaks OpenAI's API (`server.address` tells which). */
export const OPENAI: ProviderInfo = {
  name: 'openai',
  aliases: ['openai-compatible', 'azure-openai'],
  route: { prefix: '/openai', upstream: 'https://api.openai.com' },
  // The OpenAI SDKs (Python, Node, and most OpenAI-compatible clients) take the base URL with its `/v1`.
  baseUrlEnv: [{ name: 'OPENAI_BASE_URL', path: '/v1' }],
  otelName: 'openai',
  modelFamilies: ['gpt-', 'chatgpt-', 'o1', 'o3', 'o4', 'text-embedding-', 'davinci', 'babbage'],
};

/** Chat-style parameters (chat completions, completions, realtime) as OpenTelemetry request attributes. */
export const OPENAI_OTEL_PARAMS: Readonly<Record<string, OtelRequestParam>> = {
  temperature: 'temperature',
  top_p: 'top_p',
  top_k: 'top_k',
  max_tokens: 'max_tokens',
  max_completion_tokens: 'max_tokens',
  max_output_tokens: 'max_tokens',
  seed: 'seed',
  frequency_penalty: 'frequency_penalty',
  presence_penalty: 'presence_penalty',
  stop: 'stop_sequences',
  n: 'choice.count',
};

/**
 * OpenAI's own API when the route or upstream names it (`/openai`, `api.openai.com`), Azure OpenAI for a deployment's
 * path (`/openai/deployments/{name}/...`) or an Azure resource host; any other server is compatible.
 */
export function openaiProvider(target: RequestTarget): LlmProvider {
  if (AZURE_DEPLOYMENT.test(target.path) || AZURE_HOST.test(target.upstream ?? '')) return 'azure-openai';
  return /openai/i.test(target.route) || /api\.openai\.com/i.test(target.upstream ?? '') ? 'openai' : 'openai-compatible';
}

const AZURE_DEPLOYMENT = /\/openai\/deployments\/([^/]+)\//;
const AZURE_HOST = /\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)(:\d+)?(\/|$)/i;

/**
 * The model a request names, or for Azure OpenAI, which names the deployment in the path (and the model in the body
 * not at all, or empty), the deployment.
 */
export function azureModel(body: Json, path: string): string | undefined {
  const model = typeof body.model === 'string' && body.model !== '' ? body.model : undefined;
  if (model !== undefined) return model;
  const name = AZURE_DEPLOYMENT.exec(path)?.[1];
  return name === undefined ? (typeof body.model === 'string' ? body.model : undefined) : decodeURIComponent(name);
}

/** An OpenAI-style endpoint: POST to a path ending in `suffix`. */
export function openaiDetector(suffix: RegExp): (target: RequestTarget) => LlmProvider | undefined {
  return (target) => (target.method === 'POST' && suffix.test(target.path) ? openaiProvider(target) : undefined);
}

/** Usage as chat completions (`prompt_tokens`) and responses (`input_tokens`) report it. */
export function openaiUsage(u: unknown): Usage | undefined {
  if (!isObj(u)) return undefined;
  const out: Usage = {};
  const input = num(u.prompt_tokens) ?? num(u.input_tokens);
  const output = num(u.completion_tokens) ?? num(u.output_tokens);
  if (input !== undefined) out.inputTokens = input;
  if (output !== undefined) out.outputTokens = output;
  const details = (
    isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : isObj(u.input_tokens_details) ? u.input_tokens_details : {}
  ) as Json;
  if (num(details.cached_tokens)) out.cachedInputTokens = num(details.cached_tokens);
  const total = num(u.total_tokens) ?? (input !== undefined && output !== undefined ? input + output : undefined);
  if (total !== undefined) out.totalTokens = total;
  return out;
}

/** `{error: {message, type, param, code}}`, as every OpenAI API and compatible server answers. */
export function openaiErrorBody(_status: number, type: string, message: string, extra: Json): unknown {
  return { error: { message, type, param: null, code: type }, ...extra };
}
