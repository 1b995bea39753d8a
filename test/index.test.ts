/**
 * The library's public surface (`src/index.ts`, the package's "." export) is deliberate: these names and no others,
 * each listed under "Every export" in docs/library.md. A new export (or a removed one) fails here until it is added
 * to the list and to that page: a conscious, documented change to the API. Values are read from the module itself;
 * types from the export declarations of `index.ts` (and the modules it re-exports whole).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');

/** Type-only names exported by a file: `export type {...}`, `type X` specifiers, and, through `export *`, the types it declares. */
function exportedTypes(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  for (const node of source.statements) {
    if (ts.isExportDeclaration(node)) {
      const from = node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier.text : undefined;
      if (node.exportClause === undefined && from !== undefined) {
        out.push(...declaredTypes(path.resolve(path.dirname(file), from.replace(/\.js$/, '.ts'))));
      } else if (node.exportClause && ts.isNamedExports(node.exportClause)) {
        for (const el of node.exportClause.elements) if (node.isTypeOnly || el.isTypeOnly) out.push(el.name.text);
      }
    }
  }
  return out.sort();
}

function declaredTypes(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const exported = (n: ts.Node): boolean =>
    ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  return source.statements
    .filter(
      (n): n is ts.InterfaceDeclaration | ts.TypeAliasDeclaration =>
        (ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n)) && exported(n),
    )
    .map((n) => n.name.text);
}

describe('the public API', () => {
  it('exports exactly these values', async () => {
    const api = await import('../src/index.js');
    expect(Object.keys(api).sort()).toEqual(VALUES);
  });

  it('exports exactly these types', () => {
    expect(exportedTypes(path.join(SRC, 'index.ts'))).toEqual(TYPES);
  });

  it('keeps internals out', async () => {
    const api: Record<string, unknown> = await import('../src/index.js');
    for (const internal of [
      'acquireTapeLock',
      'lockFileOf',
      'createMarkerReplacer',
      'encodeBody',
      'canonicalBody',
      'withoutSecrets',
      'exactKey',
      'createSecretDetector',
      'loadOrCreateCa',
      'writeCaBundle',
      'STREAM_METHOD',
      'RESPONSE_METHOD',
      'openTapeSession',
      'createTapeWriter',
    ])
      expect(api[internal], internal).toBeUndefined();
    for (const internal of ['WriterFs', 'CertificateAuthority', 'TapeSession', 'SecretDetector']) expect(TYPES).not.toContain(internal);
  });
});

describe('docs/library.md documents the API', () => {
  const section = librarySection(readFileSync(path.join(SRC, '../docs/library.md'), 'utf8'));
  const listed = listedNames(section);

  it('lists every exported value and type under "Every export"', () => {
    expect(
      VALUES.filter((name) => !listed.values.has(name)),
      'exported but not in docs/library.md',
    ).toEqual([]);
    expect(
      TYPES.filter((name) => !listed.types.has(name)),
      'exported types not in docs/library.md',
    ).toEqual([]);
  });

  it('lists nothing that is not exported', () => {
    expect(
      [...listed.values].filter((name) => !VALUES.includes(name)),
      'in docs/library.md but not exported',
    ).toEqual([]);
    expect(
      [...listed.types].filter((name) => !TYPES.includes(name)),
      'in docs/library.md but not exported types',
    ).toEqual([]);
  });

  it('notices an undocumented export', () => {
    const withExtra = [...VALUES, 'createUndocumentedThing'];
    expect(withExtra.filter((name) => !listed.values.has(name))).toEqual(['createUndocumentedThing']);
  });
});

/** The text of the page's `## Every export` section (up to the next `## ` heading, or the end). */
function librarySection(page: string): string {
  const start = page.indexOf('\n## Every export\n');
  if (start < 0) throw new Error('docs/library.md has no "## Every export" section');
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

/**
 * The names the section lists. An entry is a bullet that opens with the code spans of what it documents, then `: `
 * (`- \`openStore(spec)\`: ...`; a group of constants: `- \`A\`, \`B\`: ...`); types are the code spans of a
 * `Types:` paragraph.
 */
function listedNames(section: string): { values: Set<string>; types: Set<string> } {
  const values = new Set<string>();
  const types = new Set<string>();
  const spans = (text: string): string[] => [...text.matchAll(/`([A-Za-z_$][\w$]*)[^`]*`/g)].map((m) => m[1]!);
  for (const paragraph of section.split(/\n(?=- |\n|Types: )/)) {
    const text = paragraph.replace(/\s*\n\s*/g, ' ').trim();
    if (text.startsWith('Types: ')) for (const name of spans(text)) types.add(name);
    const head = /^- ((?:`[^`]+`(?:, )?)+):/.exec(text);
    if (head) for (const name of spans(head[1]!)) values.add(name);
  }
  return { values, types };
}

const VALUES: string[] = [
  'BodySchema',
  'EndLineSchema',
  'ExchangeErrorSchema',
  'ExchangeSchema',
  'FramesLineSchema',
  'HeadersSchema',
  'LlmMeaningSchema',
  'MatchInfoSchema',
  'MatchKindSchema',
  'McpMeaningSchema',
  'McpNotificationSchema',
  'REDACTED',
  'RequestRecordSchema',
  'ResponseRecordSchema',
  'RouteSchema',
  'SseEventSchema',
  'Step',
  'TAPE_FORMATS_READ',
  'TAPE_FORMAT_SESSIONS',
  'TAPE_FORMAT_VERSION',
  'TAPE_HEADER',
  'TapeHeaderSchema',
  'TapeLineSchema',
  'TapedeckError',
  'ToolCallSchema',
  'UsageSchema',
  'WebSocketSessionSchema',
  'WsFrameSchema',
  'agentEnv',
  'allowLiveFor',
  'bodyJson',
  'bodyText',
  'buildOverridePlan',
  'conversationOf',
  'copyTape',
  'costOf',
  'costReport',
  'createCostFn',
  'createDirStore',
  'createLogger',
  'createMcpResponder',
  'createMemoryStore',
  'createReplayMatcher',
  'createSideEffectPolicy',
  'createUsageCostFn',
  'debrief',
  'decodeBody',
  'diffRuns',
  'diffTapes',
  'embeddingSimilarity',
  'inspectTape',
  'listTapes',
  'loadConfig',
  'loadSideEffects',
  'loadTape',
  'modelFamilies',
  'openSse',
  'openStore',
  'otlpJson',
  'pairedOutputs',
  'priceTable',
  'pruneTapes',
  'pushOtlp',
  'readTape',
  'registerFraming',
  'registerProvider',
  'renderCostReport',
  'renderDiff',
  'renderDrift',
  'renderDriftMarkdown',
  'renderExperiment',
  'renderSideEffectsFile',
  'runAgentUnderReplay',
  'runDrift',
  'runExperiment',
  'runOf',
  'runUnder',
  'sandboxLaunch',
  'sandboxSupport',
  'sendBody',
  'sendJson',
  'startProxy',
  'startServe',
  'startViewer',
  'stepState',
  'styleFor',
  'suggestSideEffects',
  'summarizeTape',
  'tapeSpans',
  'toHar',
  'toSteps',
  'usageCost',
  'wordSimilarity',
];
const TYPES: string[] = [
  'AgentEnvOptions',
  'Answer',
  'ApiId',
  'Ars',
  'ArsBand',
  'BlobSink',
  'Body',
  'CallVerdict',
  'Candidate',
  'Config',
  'ConfigChange',
  'ConfigVariance',
  'ConversationMessage',
  'CopiedTape',
  'CostCall',
  'CostFn',
  'CostReport',
  'Debrief',
  'DebriefDecision',
  'DiffOptions',
  'DirStoreOptions',
  'DriftCall',
  'DriftOptions',
  'DriftReport',
  'EmbeddingsOptions',
  'EndLine',
  'ErrorCode',
  'Exchange',
  'ExchangeError',
  'ExchangeLog',
  'ExperimentAxes',
  'ExperimentConfig',
  'ExperimentOptions',
  'ExperimentResult',
  'ExperimentRun',
  'FamilyMap',
  'Finding',
  'ForwardProxySettings',
  'FrameDecoder',
  'FramesLine',
  'Har',
  'HarEntry',
  'HeaderMap',
  'IncomingRequest',
  'InspectedTape',
  'Json',
  'Launch',
  'LlmApi',
  'LlmMeaning',
  'LlmOverrides',
  'LlmProvider',
  'LoadedTape',
  'Logger',
  'MatchInfo',
  'MatchKind',
  'MatchOutcome',
  'Matcher',
  'McpMeaning',
  'McpResponderOptions',
  'ModelPrice',
  'ModelUsage',
  'NewExchange',
  'OnMiss',
  'OtelRequestParam',
  'OutputSimilarity',
  'OverrideInputs',
  'OverridePlan',
  'OverrideRule',
  'PacedStream',
  'PendingTool',
  'PriceMap',
  'ProviderAdapter',
  'ProviderInfo',
  'ProxyOptions',
  'ProxyRequest',
  'PruneOptions',
  'PruneResult',
  'ReadTapeOptions',
  'ReasonSource',
  'RecordOptions',
  'RedactOptions',
  'RemovedTape',
  'ReplayContext',
  'ReplayMatcherOptions',
  'ReplayOptions',
  'ReplayResponder',
  'RequestRecord',
  'RequestSide',
  'RequestSigner',
  'RequestTarget',
  'ResolveOptions',
  'ResolvedTape',
  'ResponderAnswer',
  'ResponderDecision',
  'ResponseRecord',
  'ResponseSink',
  'Rewritten',
  'Route',
  'Run',
  'RunConfig',
  'RunDiff',
  'RunUnderOptions',
  'RunUnderResult',
  'RunningProxy',
  'RunningServe',
  'RunningViewer',
  'SemanticBuilder',
  'SemanticOptions',
  'ServeMode',
  'ServeOptions',
  'Severity',
  'SideEffectPolicy',
  'SideEffectsFile',
  'SignOptions',
  'SignableRequest',
  'SimilarityMethod',
  'SseEvent',
  'StepDelta',
  'StepKind',
  'StepState',
  'StoreSpec',
  'StoredBody',
  'StreamConversion',
  'StreamEvent',
  'StreamFraming',
  'Style',
  'SummarizeOptions',
  'TapeHeader',
  'TapeListEntry',
  'TapeListing',
  'TapeListingPage',
  'TapePage',
  'TapeProblem',
  'TapeQuery',
  'TapeReport',
  'TapeStats',
  'TapeStore',
  'TapeSummary',
  'TapeWriter',
  'Thresholds',
  'Timeouts',
  'Timing',
  'ToolAnnotations',
  'ToolCall',
  'ToolCallEntry',
  'ToolEdit',
  'ToolResultSoFar',
  'TraceOptions',
  'Usage',
  'UsageCostFn',
  'Verdict',
  'ViewerOptions',
  'WebSocketSession',
  'WriterOptions',
  'WsFrame',
];
