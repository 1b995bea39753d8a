/**
 * tapedeck's library API: a deliberate surface. Everything the CLI does is available here, through what the README
 * documents; internals (locks, the writer's file-system seam, the redaction and exact-key helpers) are not exported.
 * `test/index.test.ts` pins the exported names, so a new export is a conscious change. Each area keeps its exports
 * in its own block.
 */

// --- tape: the format, reading and writing
export * from './tape/schema.js';
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
export { openStore, redactStoreUrl, type StoreSpec } from './tape/open-store.js';
export { createDirStore, type DirStoreOptions } from './tape/dir-store.js';
export { copyTape, type CopiedTape } from './tape/copy-tape.js';
export { createMemoryStore } from './tape/memory-store.js';
export { statsOf, type TapeStats, type ModelUsage } from './tape/stats.js';
export { createTapeWriter, type TapeWriterOptions } from './tape/tape-writer.js';
export { readTape, loadTape, listTapeNames } from './tape/tape-reader.js';
export { createRedactor, REDACTED, SECRET_HEADERS, SECRET_QUERY, type RedactOptions } from './tape/redact.js';
export {
  createSecretDetector,
  DEFAULT_SECRET_FIELDS,
  REDACTED_PLACEHOLDER,
  type SecretDetector,
  type SecretsOptions,
} from './tape/secrets.js';
export { SECRET_RULES, type SecretRule } from './tape/secret-rules.js';
export { scanTapeFile, type SecretFinding, type ScanResult } from './tape/scan.js';
export { decodeBody, bodyJson, bodyText } from './tape/body.js';
export { TapedeckError, type ErrorCode } from './errors.js';

// --- providers: what an exchange means, one adapter per API
export {
  describeLlm,
  describeExchange,
  conversationOf,
  detectLlmApi,
  providerErrorBody,
  registerProvider,
  adapterFor,
  providerAdapters,
  convertResponse,
} from './providers/index.js';
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
} from './providers/index.js';

// --- replay: matching
export {
  createMatcher,
  type Matcher,
  type MatcherOptions,
  type MatchOutcome,
  type MatchStage,
  type Candidate,
  type IncomingRequest,
} from './replay/matcher.js';
export { exactKey, DEFAULT_IGNORED_FIELDS, type ExactKeyOptions, type KeyedRequest } from './replay/exact-key.js';
export { createReplayMatcher, type ReplayMatcherOptions } from './replay/pipeline.js';
export {
  buildOverridePlan,
  overridesFor,
  isLiveCall,
  splitRouteValue,
  type OverridePlan,
  type OverrideRule,
  type OverrideInputs,
  type LlmCallTarget,
} from './replay/override-targets.js';
export { DEFAULT_THRESHOLD, type SemanticOptions } from './replay/semantic/stages.js';
export { semanticView, type SemanticView, type TextField } from './replay/semantic/view.js';
export { analyzeText, compareText, type TextInfo, type TextComparison } from './replay/semantic/text.js';
export type { EmbeddingsOptions } from './replay/semantic/embeddings.js';

// --- proxy: record and replay servers
export { startProxy, type ProxyOptions, type RecordOptions, type ReplayOptions, type RunningProxy } from './proxy/server.js';
export { openTapeSession, defaultReplayName, type SessionOptions, type TapeSession, type ReplaySettings } from './proxy/tape-session.js';
export type { ProxyRequest, ReplayResponder, ReplayContext, OnMiss, Timing } from './proxy/types.js';
export type { ResponseSink } from './proxy/sink.js';
export { sendBody, sendJson, openSse, type PacedStream } from './proxy/sink-send.js';
export { runUnder, type RunUnderOptions, type RunUnderResult, type Launch } from './proxy/run-under.js';
export { agentEnv, writeCaBundle, type AgentEnvOptions } from './proxy/agent-env.js';
export { loadOrCreateCa, defaultCaDir, type CertificateAuthority } from './proxy/ca.js';
export { sandboxLaunch, sandboxSupport } from './proxy/sandbox.js';
export { startServe, type ServeOptions, type RunningServe, type ServeMode, type TapeReport } from './proxy/serve.js';
export { TAPE_HEADER } from './proxy/tape-name.js';
export { DEFAULT_TIMEOUTS, type Timeouts, type ForwardProxySettings } from './proxy/server.js';

// --- config: settings and prices
export { loadConfig, ConfigSchema, type Config } from './config/config.js';
export {
  priceFor,
  priceTable,
  defaultPrices,
  readPriceFile,
  modelFamilies,
  providerOfModel,
  ModelPriceSchema,
  type FamilyMap,
  PriceMapSchema,
  type ModelPrice,
  type PriceMap,
} from './config/prices.js';

// --- mcp: describe, replay over HTTP and stdio; side effects
export { describeMcp, STREAM_METHOD, RESPONSE_METHOD } from './providers/mcp.js';
export { createMcpResponder, type McpResponderOptions } from './proxy/mcp/responder.js';
export { recordStdio, type StdioRecordOptions } from './proxy/stdio/record.js';
export { replayStdio, type StdioReplayOptions } from './proxy/stdio/replay.js';
export {
  loadSideEffects,
  createSideEffectPolicy,
  policyForTape,
  allowLiveFor,
  recordedTools,
  SideEffectsFileSchema,
  type SideEffectsFile,
  type SideEffectPolicy,
  type ToolAnnotations,
  type Verdict,
} from './replay/side-effects.js';
export { suggestSideEffects, suggestTool, renderSideEffectsFile } from './replay/side-effects-init.js';

// --- inspect: list, timeline, step state, debrief, housekeeping
export { inspectTape, type InspectedTape } from './inspect/load.js';
export { Step, toSteps, stepOf, stepKind, tokensOf, errorOf, orderExchanges, type StepKind } from './inspect/steps.js';
export { stepState, resolveStepIndex, failingSteps, type StepState, type ToolResultSoFar } from './inspect/step-state.js';
export { debrief, type Debrief, type DebriefDecision, type ReasonSource } from './inspect/debrief.js';
export { costOf, usageCost, createCostFn, createUsageCostFn, type CostFn, type UsageCostFn } from './inspect/cost.js';
export { costReport, renderCostReport, type CostReport, type CostCall } from './inspect/cost-report.js';
export { diffTapes, diffRuns, runOf, divergence, stepLabel, type RunDiff, type DiffOptions, type Run } from './inspect/diff.js';
export { renderDiff } from './inspect/diff-summary.js';
export { toolSequence, editScript, argsHash, normalizeArgs, type ToolCallEntry, type ToolEdit } from './inspect/tool-sequence.js';
export { runConfig, configChanges, type ConfigChange, type RunConfig } from './inspect/run-config.js';
export { textSimilarity, wordSimilarity, type OutputSimilarity, type SimilarityMethod } from './inspect/similarity.js';
export { embeddingSimilarity } from './inspect/embedding-similarity.js';
export { ars, arsBand, type Ars, type ArsBand } from './inspect/ars.js';
export { stepDeltas, pairedOutputs, type StepDelta } from './inspect/step-deltas.js';
export {
  summarizeTape,
  summaryFromStats,
  listTapes,
  type TapeSummary,
  type TapeListing,
  type TapeListingPage,
  type SummarizeOptions,
} from './inspect/summary.js';
export { timelineRow, type TimelineRow } from './inspect/timeline.js';
export { pruneTapes, parseAge, type PruneOptions, type PruneResult } from './tape/housekeeping.js';
export { LATEST, LATEST_REPLAY } from './tape/resolve.js';

// --- view and export: the browser viewer, HAR 1.2, OpenTelemetry
export { startViewer, type ViewerOptions, type RunningViewer } from './view/viewer.js';
export { createViewApp, type ViewAppOptions, type ViewApp } from './view/view-app.js';
export { createOpenTapes, type OpenTapes, type OpenTape, type TapeListItem } from './view/open-tapes.js';
export { toHar, type Har, type HarEntry } from './export/har.js';
export { tapeSpans, otlpJson, pushOtlp, SCHEMA_URL, type TraceOptions } from './export/otlp.js';

// --- experiment: A/B configurations of a recorded run
export {
  runExperiment,
  runAgentUnderReplay,
  type ExperimentOptions,
  type ExperimentResult,
  type ExperimentRun,
  type ConfigVariance,
} from './experiment/run-experiment.js';
export { combinations, type ExperimentConfig, type ExperimentAxes } from './experiment/combinations.js';
export { renderExperiment } from './experiment/render.js';

// --- drift: a tape's calls against the live APIs again
export { runDrift, type DriftOptions, type DriftReport, type DriftCall, type CallVerdict } from './drift/run-drift.js';
export { renderDrift } from './drift/render.js';
export { renderDriftMarkdown } from './drift/render-markdown.js';
export type { Finding, Severity, Thresholds } from './drift/finding.js';
