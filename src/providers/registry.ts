/**
 * The LLM APIs tapedeck knows, in detection order (the first adapter that claims a request reads it). To add a
 * provider: write its adapter (see `types.ts`) in one file and list it here, or call `registerProvider` from code.
 */
import { anthropic } from './anthropic.js';
import { bedrockConverse } from './bedrock/bedrock-converse.js';
import { bedrockInvoke } from './bedrock/bedrock-invoke.js';
import { gemini } from './gemini.js';
import { ollama } from './ollama.js';
import { openaiChat } from './openai/openai-chat.js';
import { openaiCompletions } from './openai/openai-completions.js';
import { openaiEmbeddings } from './openai/openai-embeddings.js';
import { geminiLive } from './sessions/gemini-live.js';
import { openaiRealtime } from './sessions/openai-realtime.js';
import { openaiResponsesWithSessions } from './sessions/openai-responses-ws.js';
import { vertexAnthropic } from './vertex-anthropic.js';
import { addSecretHeaders } from '../tape/redaction/secret-headers.js';
import type { RequestSigner } from './signing.js';
import type { ApiId, LlmApi, LlmProvider, ProviderAdapter, ProviderInfo } from './types.js';

const adapters: ProviderAdapter[] = [
  gemini,
  // Before the Anthropic API: its paths end `:rawPredict`, and its model is in the path.
  vertexAnthropic,
  anthropic,
  bedrockConverse,
  bedrockInvoke,
  ollama,
  openaiChat,
  // Responses over HTTP (POST) and its WebSocket sessions (GET upgrades, `session`).
  openaiResponsesWithSessions,
  openaiEmbeddings,
  // `/completions` also ends `/chat/completions`: after chat.
  openaiCompletions,
  // WebSocket APIs: they claim no HTTP request; their sessions are read by `session`.
  openaiRealtime,
  geminiLive,
];

/** A signer's signature headers but those it names readable (a date, a body hash). */
const secretSignatureHeaders = (signer: RequestSigner | undefined): string[] =>
  (signer?.signatureHeaders ?? []).filter((h) => !(signer?.readableHeaders ?? []).includes(h));

/** The header names an adapter's credentials (and its provider's signatures) travel in: redacted on every tape. */
const credentialHeaders = (a: ProviderAdapter): string[] => [
  ...(a.credentials ?? []).map((c) => c.header),
  ...(a.provider?.secretHeaders ?? []),
  ...secretSignatureHeaders(a.provider?.signer),
];
for (const a of adapters) addSecretHeaders(credentialHeaders(a));

/** Every adapter, in detection order. */
export function providerAdapters(): readonly ProviderAdapter[] {
  return adapters;
}

/**
 * Add an adapter. It is asked before the built-in ones (a more specific API than a generic OpenAI-compatible path
 * wins); an adapter for an API already registered replaces it. Returns a function that puts things back.
 */
export function registerProvider(adapter: ProviderAdapter): () => void {
  const i = adapters.findIndex((a) => a.api === adapter.api);
  const replaced = i === -1 ? undefined : adapters.splice(i, 1)[0];
  adapters.unshift(adapter);
  const unsecret = addSecretHeaders(credentialHeaders(adapter));
  return () => {
    unsecret();
    const at = adapters.indexOf(adapter);
    if (at !== -1) adapters.splice(at, 1);
    if (replaced !== undefined) adapters.splice(Math.min(i, adapters.length), 0, replaced);
  };
}

/** The adapter for an API family as written on a tape (`llm.api`), if tapedeck knows it. */
export function adapterFor(api: LlmApi | undefined): ProviderAdapter | undefined {
  return api === undefined ? undefined : adapters.find((a) => a.api === api);
}

/** The signer of a call to `api` (`signing.ts`), when its provider signs forwarded requests (most do not). */
export function signerFor(api: ApiId | undefined): RequestSigner | undefined {
  return api === undefined ? undefined : adapterFor(api.api)?.provider?.signer;
}

/** Every provider the adapters name, once each, in detection order. */
export function providerInfos(): readonly ProviderInfo[] {
  const out: ProviderInfo[] = [];
  for (const a of adapters) if (a.provider !== undefined && !out.some((p) => p.name === a.provider?.name)) out.push(a.provider);
  return out;
}

/** The provider a tape's `llm.provider` names (its own name or an alias such as `openai-compatible`), if known. */
export function providerInfo(name: LlmProvider | undefined): ProviderInfo | undefined {
  if (name === undefined) return undefined;
  return providerInfos().find((p) => p.name === name || p.aliases?.includes(name) === true);
}

/** Provider -> the model families it serves (`claude-`, `o3`), from the adapters. */
export function providerFamilies(): Record<LlmProvider, string[]> {
  const out: Record<LlmProvider, string[]> = {};
  for (const p of providerInfos()) if (p.modelFamilies !== undefined) out[p.name] = [...p.modelFamilies];
  return out;
}
