/**
 * The tape format. A tape is a JSON Lines file: one header line, then one line per exchange.
 * Every module (recorder, matcher, replayer, inspector, diff) reads the same `Exchange` record.
 * The zod schemas here are the published format; types are derived from them.
 */
import { z } from 'zod';

export const TAPE_FORMAT_VERSION = 1;
/**
 * The format of a tape that holds a WebSocket session (continuation lines, see `FramesLineSchema`). A tape is
 * written as format 1 and becomes format 2 when its first session begins, so a tapedeck that does not know sessions
 * refuses it with "upgrade tapedeck" instead of reading it without them; tapes without sessions stay readable by it.
 */
export const TAPE_FORMAT_SESSIONS = 2;
/**
 * The format of a tape that holds a stream too large for its exchange's line: its events stored apart, in a side file
 * (`response.eventsFile`). A tapedeck that does not know that would serve such a stream empty; it refuses the tape
 * instead. The tape becomes format 3 when its first such exchange is written (whatever it was before).
 */
export const TAPE_FORMAT_STREAM_FILES = 3;
/** The formats this tapedeck reads. */
export const TAPE_FORMATS_READ: readonly number[] = [TAPE_FORMAT_VERSION, TAPE_FORMAT_SESSIONS, TAPE_FORMAT_STREAM_FILES];

/** A large body stored whole in a side file next to the tape (`<tape>.files/<sha256>.<ext>`), or in a store's blobs. */
export const StoredBodySchema = z.object({
  kind: z.literal('file'),
  file: z.string(),
  encoding: z.enum(['json', 'text', 'base64']),
  bytes: z.number().int().nonnegative(),
  sha256: z.string(),
});

/** A message body as it crossed the wire: JSON when it parses, text when it is text, base64 for binary. */
export const BodySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('empty') }),
  z.object({ kind: z.literal('json'), json: z.unknown() }),
  z.object({ kind: z.literal('text'), text: z.string() }),
  z.object({ kind: z.literal('base64'), base64: z.string() }),
  StoredBodySchema,
]);
export type Body = z.infer<typeof BodySchema>;

/** One server-sent event, with its time offset from the start of the request. */
export const SseEventSchema = z.object({
  offsetMs: z.number().nonnegative(),
  event: z.string().optional(),
  data: z.string(),
  id: z.string().optional(),
  retry: z.number().int().optional(),
  /** The exact bytes of the event block (without the blank line), kept only when re-serialising the fields would differ. */
  raw: z.string().optional(),
});
export type SseEvent = z.infer<typeof SseEventSchema>;

/**
 * The events of a stream too large for its exchange's line (format 3), stored apart like a large body: JSON Lines,
 * one `SseEvent` per line exactly as `events` would hold it inline (`tape/event-file.ts`), `events` of them.
 */
export const StoredEventsSchema = StoredBodySchema.extend({
  encoding: z.literal('text'),
  events: z.number().int().nonnegative(),
});
export type StoredEvents = z.infer<typeof StoredEventsSchema>;

export const HeadersSchema = z.record(z.string(), z.string());
export type HeaderMap = z.infer<typeof HeadersSchema>;

export const RequestRecordSchema = z.object({
  method: z.string(),
  /** Path below the route prefix, e.g. `/v1/chat/completions` for `/openai/v1/chat/completions`. */
  path: z.string(),
  /** Query parameters in wire order; secrets are redacted. */
  query: z.array(z.tuple([z.string(), z.string()])),
  headers: HeadersSchema,
  body: BodySchema,
});
export type RequestRecord = z.infer<typeof RequestRecordSchema>;

export const ResponseRecordSchema = z.object({
  status: z.number().int(),
  headers: HeadersSchema,
  /** Present for non-stream responses. */
  body: BodySchema.optional(),
  /** Present for `text/event-stream` responses: the stream, event by event. */
  events: z.array(SseEventSchema).optional(),
  /** In place of `events`, for a stream too large to hold in the line (over 16 MiB): its events stored apart. */
  eventsFile: StoredEventsSchema.optional(),
  /** Trailing bytes of a stream that did not end on an event boundary (kept so nothing is lost). */
  tail: z.string().optional(),
});
export type ResponseRecord = z.infer<typeof ResponseRecordSchema>;

/** What went wrong on the way, when the exchange did not complete normally. */
export const ExchangeErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  /** Where it happened: before any response byte, or after the response started (mid-stream). */
  phase: z.enum(['connect', 'response', 'stream']),
});
export type ExchangeError = z.infer<typeof ExchangeErrorSchema>;

/**
 * One WebSocket message of a session, or its close, in the order tapedeck relayed them. Ping and pong are per
 * connection and not recorded. `data` is a body: a text message that is JSON is stored as JSON, other text as
 * text; a binary message as base64 (or as JSON when its bytes are exactly the compact JSON written back), and in a
 * side file when it is larger than the tape's side-file threshold, byte-exact.
 */
export const WsFrameSchema = z.object({
  /** Who sent it. */
  from: z.enum(['client', 'server']),
  /** ms since the start of the session (its upgrade request). */
  offsetMs: z.number().nonnegative(),
  kind: z.enum(['text', 'binary', 'close']),
  /** The message (text and binary). */
  data: BodySchema.optional(),
  /** Close: the status code (absent when the close frame had none) and reason. */
  code: z.number().int().optional(),
  reason: z.string().optional(),
});
export type WsFrame = z.infer<typeof WsFrameSchema>;

/** A WebSocket session's messages (the exchange's request is the upgrade request, its response the `101` head). */
export const WebSocketSessionSchema = z.object({
  frames: z.array(WsFrameSchema),
});
export type WebSocketSession = z.infer<typeof WebSocketSessionSchema>;

export const ToolCallSchema = z.object({
  id: z.string().optional(),
  name: z.string(),
  /** Parsed arguments when they are JSON, otherwise the raw string. */
  arguments: z.unknown(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const UsageSchema = z.object({
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  cachedInputTokens: z.number().optional(),
  totalTokens: z.number().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

/** What an LLM API exchange means, extracted by a provider adapter. */
export const LlmMeaningSchema = z.object({
  /** Who serves it: `openai`, `anthropic`, `gemini`, `openai-compatible`, or a provider registered by a library user. */
  provider: z.string(),
  /** The API family: `chat.completions`, `responses`, `messages`, `generateContent`, `embeddings`, `completions`, or a registered one. */
  api: z.string(),
  model: z.string().optional(),
  /** Sampling and shaping parameters that change the answer (temperature, top_p, max_tokens, seed, tool_choice, ...). */
  params: z.record(z.string(), z.unknown()),
  streamed: z.boolean(),
  usage: UsageSchema.optional(),
  toolCalls: z.array(ToolCallSchema),
  outputText: z.string().optional(),
  /** Reasoning / thinking text the model emitted, when the API exposes it. */
  thinking: z.string().optional(),
  stopReason: z.string().optional(),
  /** The provider's error type when the API answered with an error (HTTP error or an `error` event mid-stream). */
  errorType: z.string().optional(),
});
export type LlmMeaning = z.infer<typeof LlmMeaningSchema>;

/** One JSON-RPC message that arrived while an MCP request was open (progress, logging, server requests). */
export const McpNotificationSchema = z.object({
  offsetMs: z.number().nonnegative(),
  message: z.unknown(),
});

/** The method tapedeck gives a recorded server-to-client stream (a GET stream, legacy or standalone): not a JSON-RPC method. */
export const STREAM_METHOD = 'tapedeck/stream';
/** The method tapedeck gives a client's JSON-RPC response (to a server request such as sampling). */
export const RESPONSE_METHOD = 'tapedeck/response';

/** What an MCP exchange means: one JSON-RPC request (or notification) and what came back for it. */
export const McpMeaningSchema = z.object({
  /** client->server is the usual case; server->client for requests the server sent (sampling, elicitation). */
  direction: z.enum(['client-to-server', 'server-to-client']),
  method: z.string(),
  jsonrpcId: z.union([z.string(), z.number()]).optional(),
  toolName: z.string().optional(),
  arguments: z.unknown().optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
  isError: z.boolean().optional(),
  notifications: z.array(McpNotificationSchema).default([]),
  sessionId: z.string().optional(),
  protocolVersion: z.string().optional(),
  transport: z.enum(['streamable-http', 'sse', 'stdio']),
  /**
   * A legacy HTTP+SSE stream (recorded): which of its events answered which POST (that POST's exchange id, and the
   * indexes of its events in `response.events`: notifications first, the answer last). Absent on tapes recorded
   * before it existed; replay pairs those itself.
   */
  answers: z.array(z.object({ exchange: z.string(), events: z.array(z.number().int().nonnegative()) })).optional(),
});
export type McpMeaning = z.infer<typeof McpMeaningSchema>;

/** `fault`: an answer tapedeck made up on purpose, by a fault rule (`--faults`): a 429, a reset, a cut stream. */
export const MatchKindSchema = z.enum(['exact', 'semantic', 'live', 'miss', 'blocked', 'mock', 'fault']);
export type MatchKind = z.infer<typeof MatchKindSchema>;

/** On replay tapes: how the served answer was found. */
export const MatchInfoSchema = z.object({
  kind: MatchKindSchema,
  /** Id of the recorded exchange that was served. */
  source: z.string().optional(),
  /** Matching stage that produced it (exact, normalised, similarity, ...). */
  stage: z.string().optional(),
  score: z.number().optional(),
  reason: z.string().optional(),
});
export type MatchInfo = z.infer<typeof MatchInfoSchema>;

export const ExchangeSchema = z.object({
  type: z.literal('exchange'),
  /** Unique within the tape, stable: `<seq>` padded, e.g. `000042`. */
  id: z.string(),
  /** Order of completion within the tape (0-based). */
  seq: z.number().int().nonnegative(),
  /** Wall-clock start of the request. */
  startedAt: z.string(),
  /** Start of the request, in ms since the tape session started: the shared timeline. */
  offsetMs: z.number().nonnegative(),
  transport: z.enum(['http', 'stdio', 'websocket']),
  /** Route prefix the request came in on (`/openai`), or the stdio server name. */
  route: z.string(),
  /** Upstream the route maps to (base URL, or the stdio command line). */
  upstream: z.string().optional(),
  request: RequestRecordSchema,
  response: ResponseRecordSchema.optional(),
  /** A WebSocket session (`transport: "websocket"`): its messages in both directions. */
  websocket: WebSocketSessionSchema.optional(),
  error: ExchangeErrorSchema.optional(),
  timing: z.object({
    /** Time to the first response byte. */
    ttfbMs: z.number().nonnegative().optional(),
    durationMs: z.number().nonnegative(),
  }),
  llm: LlmMeaningSchema.optional(),
  mcp: McpMeaningSchema.optional(),
  match: MatchInfoSchema.optional(),
  /** Free-form annotations (overrides applied on a modified replay, blocked side effects, ...). */
  notes: z.record(z.string(), z.unknown()).optional(),
});
export type Exchange = z.infer<typeof ExchangeSchema>;

export const RouteSchema = z.object({ prefix: z.string(), upstream: z.string() });
export type Route = z.infer<typeof RouteSchema>;

export const TapeHeaderSchema = z.object({
  type: z.literal('header'),
  format: z.union([z.literal(TAPE_FORMAT_VERSION), z.literal(TAPE_FORMAT_SESSIONS), z.literal(TAPE_FORMAT_STREAM_FILES)]),
  tapedeck: z.string(),
  name: z.string(),
  createdAt: z.string(),
  mode: z.enum(['record', 'replay']),
  routes: z.array(RouteSchema),
  /** On replay tapes: which tape was replayed and with what settings. */
  replayOf: z
    .object({
      tape: z.string(),
      onMiss: z.string(),
      llm: z.enum(['tape', 'live']).optional(),
      overrides: z.record(z.string(), z.unknown()).optional(),
      /** Overrides that target a route or a provider: `{field, value, route?, provider?}`. */
      targeted: z
        .array(z.object({ field: z.string(), value: z.unknown(), route: z.string().optional(), provider: z.string().optional() }))
        .optional(),
      /** Only LLM calls on these routes went live. */
      liveRoutes: z.array(z.string()).optional(),
      /** LLM calls up to this step of the tape were answered from it, the later ones went live. */
      liveAfter: z.number().optional(),
      /** The mock file whose answers were served (`match.kind: "mock"`). */
      mocks: z.string().optional(),
    })
    .optional(),
});
export type TapeHeader = z.infer<typeof TapeHeaderSchema>;

/**
 * A continuation line of an exchange that grows while it is open (a WebSocket session): messages as they were
 * relayed, written as they go so a crash keeps what the client had received. The reader merges them into the
 * exchange line with the same id that comes before them.
 */
export const FramesLineSchema = z.object({
  type: z.literal('frames'),
  exchange: z.string(),
  frames: z.array(WsFrameSchema),
});
export type FramesLine = z.infer<typeof FramesLineSchema>;

/**
 * The last line of a growing exchange: how long it lasted and how it ended. An exchange without one was still open
 * when the tape was read (or the recorder stopped before it ended): the reader marks it `SESSION_CUT`.
 */
export const EndLineSchema = z.object({
  type: z.literal('end'),
  exchange: z.string(),
  durationMs: z.number().nonnegative(),
  /** Why it ended other than by a close handshake (a dropped connection, tapedeck stopping, a replay miss). */
  error: ExchangeErrorSchema.optional(),
  /** On replay tapes: how the session was answered (replaces the match of the exchange line). */
  match: MatchInfoSchema.optional(),
  /** Annotations added to the exchange's. */
  notes: z.record(z.string(), z.unknown()).optional(),
});
export type EndLine = z.infer<typeof EndLineSchema>;

export const TapeLineSchema = z.discriminatedUnion('type', [TapeHeaderSchema, ExchangeSchema, FramesLineSchema, EndLineSchema]);
