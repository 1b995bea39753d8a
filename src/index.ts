/**
 * tapedeck's library API: a deliberate surface, exactly what docs/library.md lists under "Every export" (stable within
 * 0.x minor versions). Everything else, from tape locks and the CA files to the exact key, the secret detector and
 * the helpers the CLI composes, stays inside its module. `test/index.test.ts` pins the exported names and fails on
 * one that page does not document, so a new export is a conscious, documented change. Each area keeps its exports
 * in its own block, in that page's order.
 */

// --- tape and stores: the format, the store seam, reading tapes
export {
  TAPE_FORMAT_VERSION,
  TAPE_FORMAT_SESSIONS,
  TAPE_FORMATS_READ,
  BodySchema,
  SseEventSchema,
  HeadersSchema,
  RequestRecordSchema,
  ResponseRecordSchema,
  ExchangeErrorSchema,
  WsFrameSchema,
  WebSocketSessionSchema,
  ToolCallSchema,
  UsageSchema,
  LlmMeaningSchema,
  McpNotificationSchema,
  McpMeaningSchema,
  MatchKindSchema,
  MatchInfoSchema,
  ExchangeSchema,
  RouteSchema,
  TapeHeaderSchema,
  FramesLineSchema,
  EndLineSchema,
  TapeLineSchema,
} from './tape/schema.js';
export type {
  Body,
  SseEvent,
  HeaderMap,
  RequestRecord,
  ResponseRecord,
  ExchangeError,
  WsFrame,
  WebSocketSession,
  ToolCall,
  Usage,
  LlmMeaning,
  McpMeaning,
  MatchKind,
  MatchInfo,
  Exchange,
  Route,
  TapeHeader,
  FramesLine,
  EndLine,
} from './tape/schema.js';
export type {
  TapeStore,
  TapeWriter,
  WriterOptions,
  NewExchange,
  LoadedTape,
  TapeProblem,
  ReadTapeOptions,
  TapeQuery,
  TapePage,
  TapeListEntry,
  ResolvedTape,
  ResolveOptions,
  RemovedTape,
  StoredBody,
  BlobSink,
} from './tape/store.js';
export { openStore, type StoreSpec } from './tape/stores/open-store.js';
export { createDirStore, type DirStoreOptions } from './tape/stores/dir-store.js';
export { createMemoryStore } from './tape/stores/memory-store.js';
export { copyTape, type CopiedTape } from './tape/stores/copy-tape.js';
export { loadTape, readTape } from './tape/tape-reader.js';
export { decodeBody, bodyJson, bodyText } from './tape/body.js';
export { REDACTED, type RedactOptions } from './tape/redaction/redact.js';
export type { TapeStats, ModelUsage } from './tape/stats.js';
export { pruneTapes, type PruneOptions, type PruneResult } from './tape/stores/housekeeping.js';
export { TapedeckError, type ErrorCode } from './errors.js';
export { createLogger, type Logger } from './log.js';

// --- providers: what an exchange means, one adapter per API
export { registerProvider, conversationOf } from './providers/index.js';
export type {
  ProviderAdapter,
  ProviderInfo,
  OtelRequestParam,
  ApiId,
  LlmProvider,
  LlmApi,
  ConversationMessage,
  Answer,
  PendingTool,
  RequestSide,
  RequestTarget,
  LlmOverrides,
  Rewritten,
  SemanticBuilder,
  StreamConversion,
  Json,
  RequestSigner,
  SignableRequest,
  SignOptions,
} from './providers/index.js';
export { registerFraming } from './tape/framing/registry.js';
export type { StreamFraming, FrameDecoder, StreamEvent } from './tape/framing/framing.js';

// --- replay and matching
export { createReplayMatcher, type ReplayMatcherOptions } from './replay/pipeline.js';
export type { Matcher, MatchOutcome, Candidate, IncomingRequest } from './replay/matcher.js';
export type { SemanticOptions } from './replay/semantic/stages.js';
export type { EmbeddingsOptions } from './replay/semantic/embeddings.js';
export { buildOverridePlan, type OverridePlan, type OverrideRule, type OverrideInputs } from './replay/override-targets.js';

// --- proxy and running: record and replay servers, wrapper mode, tapes for test suites
export { startProxy, type ProxyOptions, type RecordOptions, type ReplayOptions, type RunningProxy } from './front/server.js';
export type { Timeouts, ForwardProxySettings } from './front/server.js';
export type { ProxyRequest, ReplayResponder, ResponderDecision, ResponderAnswer, ReplayContext, OnMiss, Timing } from './http/types.js';
export type { ExchangeLog } from './engine/exchange-log.js';
export { createMcpResponder, type McpResponderOptions } from './transports/mcp/responder.js';
export type { ResponseSink } from './http/sink.js';
export { sendBody, sendJson, openSse, type PacedStream } from './http/sink-send.js';
export { runUnder, type RunUnderOptions, type RunUnderResult, type Launch } from './run/run-under.js';
export { agentEnv, type AgentEnvOptions } from './run/agent-env.js';
export { sandboxLaunch, sandboxSupport } from './run/sandbox.js';
export { startServe, type ServeOptions, type RunningServe, type ServeMode, type TapeReport } from './serve/serve.js';
export { TAPE_HEADER } from './serve/tape-name.js';
export { loadConfig, type Config } from './config/config.js';

// --- inspect, diff, cost: steps, step state, debrief, listings, runs compared, prices
export { inspectTape, type InspectedTape } from './inspect/load.js';
export { Step, toSteps, type StepKind } from './inspect/steps.js';
export { stepState, type StepState, type ToolResultSoFar } from './inspect/step-state.js';
export { debrief, type Debrief, type DebriefDecision, type ReasonSource } from './inspect/debrief.js';
export {
  summarizeTape,
  listTapes,
  type TapeSummary,
  type TapeListing,
  type TapeListingPage,
  type SummarizeOptions,
} from './inspect/summary.js';
export { diffTapes, diffRuns, runOf, type RunDiff, type DiffOptions, type Run } from './inspect/diff/diff.js';
export { renderDiff } from './inspect/diff/diff-summary.js';
export { styleFor, type Style } from './inspect/format.js';
export { wordSimilarity, type OutputSimilarity, type SimilarityMethod } from './inspect/diff/similarity.js';
export { embeddingSimilarity } from './inspect/diff/embedding-similarity.js';
export { pairedOutputs, type StepDelta } from './inspect/diff/step-deltas.js';
export type { ToolCallEntry, ToolEdit } from './inspect/diff/tool-sequence.js';
export type { ConfigChange, RunConfig } from './inspect/run-config.js';
export type { Ars, ArsBand } from './inspect/diff/ars.js';
export { costOf, usageCost, createCostFn, createUsageCostFn, type CostFn, type UsageCostFn } from './inspect/cost.js';
export { costReport, renderCostReport, type CostReport, type CostCall } from './inspect/cost-report.js';
export { priceTable, modelFamilies, type ModelPrice, type PriceMap, type FamilyMap } from './config/prices.js';

// --- side effects: which MCP tools and HTTP calls replay may run for real
export {
  loadSideEffects,
  createSideEffectPolicy,
  allowLiveFor,
  type SideEffectsFile,
  type SideEffectPolicy,
  type ToolAnnotations,
  type Verdict,
} from './replay/side-effects.js';
export { suggestSideEffects, renderSideEffectsFile } from './replay/side-effects-init.js';

// --- export: HAR 1.2 and OpenTelemetry
export { toHar, type Har, type HarEntry } from './export/har.js';
export { tapeSpans, otlpJson, pushOtlp, type TraceOptions } from './export/otlp.js';

// --- view: the browser viewer
export { startViewer, type ViewerOptions, type RunningViewer } from './view/viewer.js';

// --- experiment and drift: A/B configurations of a recorded run; a tape's calls against the live APIs again
export {
  runExperiment,
  runAgentUnderReplay,
  type ExperimentOptions,
  type ExperimentResult,
  type ExperimentRun,
  type ConfigVariance,
} from './experiment/run-experiment.js';
export type { ExperimentConfig, ExperimentAxes } from './experiment/combinations.js';
export { renderExperiment } from './experiment/render.js';
export { runDrift, type DriftOptions, type DriftReport, type DriftCall, type CallVerdict } from './drift/run-drift.js';
export { renderDrift } from './drift/render.js';
export { renderDriftMarkdown } from './drift/render-markdown.js';
export type { Finding, Severity, Thresholds } from './drift/finding.js';
