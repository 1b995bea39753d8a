/**
 * The contract every LLM API adapter fulfils. One adapter per API family (`openai-chat.ts`, `anthropic.ts`, ...)
 * owns everything that API means: how its requests are recognised, what a request and an answer say (model, usage,
 * tool calls, text, thinking, stop reason), the conversation as the model saw it, its error body, where modified
 * replay's overrides go, which fields semantic matching compares, stream <-> JSON conversion, and (`ProviderInfo`) the
 * provider's base-URL variables, trace names, model families and credential headers. Adding a provider is one new
 * file and one line in `registry.ts` (or one `registerProvider` call).
 */
import type { Exchange, LlmMeaning, RequestRecord, ResponseRecord, SseEvent, Usage, WsFrame } from '../tape/schema.js';
import type { RequestSigner } from './signing.js';

/** A provider name as written on the tape (`openai`, `anthropic`, `gemini`, `openai-compatible`, or a registered one). */
export type LlmProvider = string;
/** An API family as written on the tape (`chat.completions`, `responses`, `messages`, `generateContent`, ...). */
export type LlmApi = string;

export interface ApiId {
  provider: LlmProvider;
  api: LlmApi;
}

/** What detection reads of a request. `path` is below the route prefix, without the query. */
export interface RequestTarget {
  route: string;
  path: string;
  method: string;
  upstream?: string | undefined;
}

/** The parts of an exchange a provider adapter reads. */
export type ExchangeView = Pick<Exchange, 'route' | 'request' | 'response' | 'error'>;

export type Json = Record<string, unknown>;

/** One message of the conversation as the model saw it, whatever the provider's shape. */
export interface ConversationMessage {
  role: string;
  text: string;
  /** Tool calls an assistant turn made. */
  toolCalls?: { id?: string | undefined; name: string; arguments: unknown }[];
  /** For a tool result: the call it answers. */
  toolCallId?: string | undefined;
  /** Thinking / reasoning the assistant turn carried. */
  thinking?: string;
}

/** A tool call being assembled from an answer (streamed arguments arrive in fragments). */
export interface PendingTool {
  id?: string | undefined;
  name: string;
  args: string;
  /** Arguments that arrived already parsed (Anthropic `input`, Gemini `args`). */
  parsed?: unknown;
}

/** The answer side of an exchange's meaning, collected from a JSON body or event by event. */
export interface Answer {
  text: string;
  thinking: string;
  tools: (PendingTool | undefined)[];
  usage?: Usage | undefined;
  stop?: string;
  error?: string;
  model?: string | undefined;
}

/** Request-side meaning an adapter reads from a request body (the common parameters are read for it). */
export interface RequestSide {
  model?: string | undefined;
  /** Whether the answer was asked for as a stream. */
  streamed: boolean;
  /** Parameters this API keeps in its own places (Gemini's `generationConfig`, Responses' `text.format`). */
  params?: Json;
}

/** Modified replay: what to rewrite into an LLM request on the wire. */
export interface LlmOverrides {
  model?: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
}

export interface Rewritten {
  body: Json;
  /** The path, changed only where the model is in it (Gemini). */
  path: string;
  /** What was changed, as `{field: {from, to}}`, for the replay tape. */
  applied: Record<string, { from: unknown; to: unknown }>;
}

/**
 * The building blocks of a request's semantic view (`replay/semantic/view.ts` implements them). An adapter walks its
 * own request shape and calls these for the values that may differ between runs; everything it returns unchanged
 * must be equal for two requests to be compared at all.
 */
export interface SemanticBuilder {
  /** Prose, compared word by word. Returns the placeholder the skeleton keeps in its place. */
  prose(path: string, text: string): unknown;
  /** Tool arguments: identifiers stay exact, words are compared, nonce-named keys are left out. */
  args(path: string, value: unknown): unknown;
  /** A tool's result as a message carries it: JSON compared by key, prose as prose. */
  result(path: string, value: unknown): unknown;
  /** Tool arguments given as a JSON string. */
  jsonArgs(path: string, value: unknown): unknown;
}

/** Serving a streamed request from a JSON recording and the other way round (the answer is the same, its shape is not). */
export interface StreamConversion {
  /** Whether a streamed answer to this request body carries usage (OpenAI's `stream_options.include_usage`). */
  usageAsked(request: unknown): boolean;
  /** The events a streamed answer has, from a JSON answer; undefined when the body is not this API's answer. */
  toEvents(json: Json, opts: { includeUsage: boolean }): SseEvent[] | undefined;
  /** The JSON answer a stream adds up to (the events' `data`); undefined when it cannot be assembled. */
  fromEvents(data: readonly string[]): Json | undefined;
}

/**
 * One way this API's official SDKs find an API key and send it: the environment variables they read (first set one
 * wins) and the header (or query parameter) it travels in. What `tapedeck drift` puts back into a recorded request,
 * since a tape holds no key.
 */
export interface ApiCredential {
  env: readonly string[];
  /** The header that carries the key (lower case). */
  header: string;
  /** `bearer`: the header's value is `Bearer KEY`; otherwise the key itself. */
  scheme?: 'bearer';
  /** A query parameter that may carry the key instead (Gemini's `key`). */
  query?: string;
  /**
   * The key belongs to other hosts than the provider's own API (`ProviderInfo.route`), such as Azure OpenAI's resource
   * hosts: `tapedeck drift` sends it only where the user routes it (`--route`, `--allow-host`), never by the tape's say.
   */
  elsewhere?: boolean;
}

/**
 * What tapedeck knows of a provider beyond one API's wire format, shared by its adapters (OpenAI's chat, responses,
 * completions, embeddings and realtime adapters hold the same one). Everything that names a provider outside its
 * adapters reads it from here through the registry: the wrapper's environment, trace export, the route suggestion
 * of a no-route error, model families (`--llm live` targets), and the credential headers redacted on a tape.
 */
export interface ProviderInfo {
  /** The provider as the tape writes it (`llm.provider`). */
  readonly name: LlmProvider;
  /** Other `llm.provider` values that are this provider's API served elsewhere (`openai-compatible`). */
  readonly aliases?: readonly LlmProvider[];
  /** The route prefix it is served under by default (`/openai`) and its real upstream. */
  readonly route?: { readonly prefix: string; readonly upstream: string };
  /**
   * The base-URL environment variables its SDKs read, and the path after the route prefix each wants (`/v1` for
   * `OPENAI_BASE_URL`): `tapedeck record -- CMD` points them at tapedeck.
   */
  readonly baseUrlEnv?: readonly { readonly name: string; readonly path?: string }[];
  /** `gen_ai.provider.name` (OpenTelemetry's well-known value, e.g. `gcp.gemini`). Default: `name`. */
  readonly otelName?: string;
  /**
   * The model families it serves: `claude-` (a prefix, ends in `-`) or `o3` (that model and `o3-...`). Tells which
   * provider a model in `--llm live --model M` belongs to; a user's price file may add to them.
   */
  readonly modelFamilies?: readonly string[];
  /** Header names that carry its credentials beyond `credentials[].header` (redacted on every tape). */
  readonly secretHeaders?: readonly string[];
  /**
   * How a forwarded request is signed for it (`signing.ts`), when its requests carry a signature over their bytes
   * (AWS SigV4); absent for a provider that takes the client's key as it came (most). Its signature headers are
   * redacted on every tape.
   */
  readonly signer?: RequestSigner;
}

/** The `gen_ai.request.*` attributes a request parameter can be. */
export type OtelRequestParam =
  'temperature' | 'top_p' | 'top_k' | 'max_tokens' | 'seed' | 'frequency_penalty' | 'presence_penalty' | 'stop_sequences' | 'choice.count';

export interface ProviderAdapter {
  /** The API family, written on the tape as `llm.api`. */
  readonly api: LlmApi;
  /** The provider this API belongs to (see `ProviderInfo`). */
  readonly provider?: ProviderInfo;
  /** `gen_ai.operation.name` of a call (`chat`, `embeddings`, `generate_content`). Default: `chat`. */
  readonly otelOperation?: string;
  /** Top-level request body fields that change the answer besides the conversation, recorded as `llm.params`. */
  readonly paramKeys?: readonly string[];
  /**
   * Its `llm.params` names -> the OpenTelemetry request attribute each is (`maxOutputTokens` -> `max_tokens` for
   * `gen_ai.request.max_tokens`). Where two names map to one attribute, the first present wins.
   */
  readonly otelParams?: Readonly<Record<string, OtelRequestParam>>;
  /** The ways this API's SDKs send a key, most usual first (`OPENAI_API_KEY` as `Authorization: Bearer ...`). */
  readonly credentials?: readonly ApiCredential[];
  /** The provider when a request is this API (`openai`, `anthropic`, ...), else undefined. */
  detect(target: RequestTarget): LlmProvider | undefined;
  /** Request side: model, whether it streams, and parameters this API keeps in its own places. */
  describeRequest(body: Json, path: string): RequestSide;
  /** Fold a successful JSON answer into `answer`. */
  describeBody(answer: Answer, body: Json): void;
  /** Fold one SSE event (its `data` parsed) into `answer`; error events included. */
  describeEvent(answer: Answer, data: Json, event: SseEvent): void;
  /** The conversation as the model saw it, from a request body. */
  conversation(body: unknown): ConversationMessage[];
  /** The text the model wrote before each tool call of an answer, where the API keeps that order. */
  textBeforeCalls?(response: ResponseRecord): string[] | undefined;
  /** An error body in this API's own shape, so its official SDKs surface it as a normal API error. */
  errorBody(status: number, type: string, message: string, extra: Json): unknown;
  /**
   * The request with the overrides written where this API keeps them. `body` is a copy the adapter may change;
   * `provider` is who serves it (a compatible server may name a field differently).
   */
  applyOverrides(body: Json, path: string, overrides: LlmOverrides, provider: LlmProvider): Rewritten;
  /** The request as semantic matching sees it; absent: exact matching only. */
  semantic?(body: Json, b: SemanticBuilder): unknown;
  /** Stream <-> JSON conversion; absent: `stream` must match exactly. */
  stream?: StreamConversion;
  /** A WebSocket API (OpenAI Realtime, Gemini Live): how its sessions are read and replayed (`SessionReader`). */
  session?: SessionReader;
}

/**
 * What a WebSocket session means, per API (OpenAI Realtime, Gemini Live): which upgrades are this API, which fields
 * change every run (mapped on replay), the API's own error event for a replay miss, where modified replay's
 * overrides go, and the session's responses, each read as one LLM call (`sessions/`).
 */
/** One response of a session: when it ran, what the model saw, what it answered. */
export interface SessionResponse {
  /** Offsets in the session (ms since its upgrade request): the request that started it, and its last message. */
  startMs: number;
  endMs: number;
  /** The request as the model saw it at this response, in the shape the adapter's `conversation` reads. */
  body: Json;
  llm: LlmMeaning;
  /** False when the session ended before the response did. */
  complete: boolean;
  /**
   * Where it is in the session's frames: the index of the client message that asked for it and of its last message
   * (replay serves the server messages between them), for APIs whose responses are matched one by one.
   */
  frames?: [number, number];
}

export interface SessionReader {
  /** The provider when a WebSocket upgrade (`target.method` GET) is this API, else undefined. */
  detect(target: RequestTarget): LlmProvider | undefined;
  /** Names of fields whose values are per-run identifiers: ignored when matching, mapped recorded -> new on replay. */
  readonly idKeys: readonly string[];
  /** A replay miss as this API's own error event, or undefined when it has none (the close reason says it then). */
  missEvent?(message: string, client: unknown): unknown;
  /** Modified replay: the overrides in the upgrade URL's query (OpenAI's `?model=`). */
  overrideQuery?(query: [string, string][], o: LlmOverrides): { query: [string, string][]; applied: Rewritten['applied'] };
  /** Modified replay: the overrides in a client message (`session.update`, `setup`); other messages unchanged. */
  overrideMessage?(json: Json, o: LlmOverrides): { json: Json; applied: Rewritten['applied'] };
  /** The model a session asks for before any message (in its URL), if it says. */
  modelOf?(request: RequestRecord): string | undefined;
  /** The session's responses, in order. */
  responses(provider: LlmProvider, request: RequestRecord, frames: readonly WsFrame[]): SessionResponse[];
  /**
   * For APIs that ask for one response per client message (Responses over WebSocket: `response.create`): the request
   * body a client message carries (as an HTTP call of the adapter's API would), or undefined when it asks for none.
   * Replay then matches each such message like an HTTP call (`replay/session-calls.ts`), not message by message.
   */
  callOf?(message: unknown): Json | undefined;
}
