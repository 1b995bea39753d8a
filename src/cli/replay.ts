/**
 * `tapedeck replay`: the flags (checked before the tape is looked up), the replay proxy's options they make, and what
 * the command says when the replay starts; the proxy itself is `front/server.ts`.
 */
import { readFileSync } from 'node:fs';
import { TapedeckError } from '../errors.js';
import { createLlmLiveResponder } from '../transports/http/llm-live.js';
import {
  buildOverridePlan,
  isLiveCall,
  overridesFor,
  planHeader,
  splitRouteValue,
  type OverrideInputs,
  type OverridePlan,
} from '../replay/override-targets.js';
import { modelFamilies } from '../config/prices.js';
import { formatPlan, planRun } from '../inspect/replay-plan.js';
import { createReplayMatcher } from '../replay/pipeline.js';
import { createMcpResponder } from '../transports/mcp/responder.js';
import { createOAuthResponder } from '../transports/oauth/responder.js';
import { allowLiveFor, createSideEffectPolicy, loadSideEffects, type SideEffectsFile } from '../replay/side-effects.js';
import type { OnMiss, Timing } from '../http/types.js';
import { startProxy, type ReplayOptions, type RunningProxy } from '../front/server.js';
import { runWrapped } from './shared/wrap.js';
import { withStore } from './shared/store-options.js';
import { validateTapeName } from '../tape/paths.js';
import { loadMocks, type Mocks } from '../replay/mocks.js';
import { createHttpMockResponder } from '../transports/http/http-mock.js';
import { toSteps } from '../inspect/steps.js';
import type { Exchange } from '../tape/schema.js';
import type { TapeStore } from '../tape/store.js';
import { refuseUnknownExpectNames, type ExpectSpec } from '../inspect/expected-calls.js';
import { STREAM_METHOD } from '../providers/mcp.js';
import { renamedList, stringList, stringValue, type Command, type CommandContext, type ParsedValues } from './shared/command.js';
import { sideEffectNotes } from './shared/side-effect-notes.js';
import { noticeLines, warning, type Said } from './shared/notice.js';
import { matchingOptions, proxyBase, serveSettings, serveUntilSignal, SERVE_OPTIONS, type ServeSettings } from './shared/serve-options.js';
import { checkExpected, EXPECT_USAGE, expectFrom, FAULT_OPTIONS, FAULT_USAGE, faultPlanFrom } from './shared/fault-options.js';

export const replayCommand: Command = {
  name: 'replay',
  summary: 'answer from a tape with the upstreams gone; save what was served as a new tape',
  usage: [
    'tapedeck replay NAME [--dir DIR | --store URL] [--namespace NS] [--port N] [--host H] [--route PREFIX=URL]...',
    '                [--config FILE] [--on-miss strict|lenient|live] [--save-as NAME] [--timing instant|recorded|FACTOR]',
    '                [--side-effects FILE] [--threshold S | --exact-only] [--explain] [--no-match-headers] [--allow-host NAME]...',
    '                [--verbose]',
    '                [--llm tape|live [--model [ROUTE=]M]... [--system-prompt [ROUTE=]TEXT|@FILE]... [--temperature [ROUTE=]T]...',
    '                 [--max-tokens [ROUTE=]N]... [--live-route ROUTE]... [--live-after STEP]] [--mock FILE]',
    '                [--connect-timeout S] [--response-timeout S] [--idle-timeout S] [--shutdown-timeout S]',
    '                [--faults FILE] [--fault RULE]... [--seed N] [--expect KINDS] [--sandbox] [-- COMMAND ARGS...]',
    '',
    '  NAME                the tape to replay: a name, a unique prefix, latest, or a path to a .jsonl; --tape NAME says',
    '                      the same',
    "  --on-miss MODE      strict (default): a request the tape cannot answer gets a 404 error in the provider's shape",
    '                      lenient: the same error, marked lenient (x-tapedeck-lenient), for agents that carry on',
    '                      live: forward it to the real upstream and record it on the replay tape',
    '  --save-as NAME      name of the replay tape (default NAME.replay-TIMESTAMP, printed at start)',
    '  --timing T          instant (default): streams at once; recorded: the recorded gaps; a number scales the gaps',
    '  --side-effects F    reviewed side-effects file (done: true): those tools and HTTP calls never run, whatever',
    '                      --on-miss says; without it, an MCP tool is a side effect unless recorded as readOnlyHint',
    '  --threshold S       similarity a request needs to be served a recording that is not identical (default 0.85)',
    '  --exact-only        no normalised or similarity matching: exact keys only',
    '  --explain           at the end, list each answer served by similarity: the recording, the score, what differed',
    '                      and what was set aside (per-run values, fields that never change the answer)',
    '  --no-match-headers  no x-tapedeck-* headers on answers (config matchHeaders: false), for agents that snapshot headers',
    '  --llm MODE          tape (default): LLM calls answered from the tape; live: sent to the real upstream (tool',
    '                      calls are still answered from the tape, side effects still blocked)',
    '  --model M           with --llm live: the model to ask instead of the recorded one, for the calls of the provider',
    "                      M belongs to (the price table's families); ROUTE=M (e.g. /anthropic=claude-haiku-4-5)",
    '                      targets the calls on that route instead; repeatable (one per provider or route)',
    '  --system-prompt S   with --llm live: replace the system prompt (text, or @FILE: the file less its trailing newline)',
    '  --temperature T     with --llm live: sampling temperature',
    '  --max-tokens N      with --llm live: output token limit',
    '                      (these three apply where --model does, or to every live call without --model;',
    '                      ROUTE=VALUE targets a route)',
    '  --live-route ROUTE  only LLM calls on ROUTE go live (implies --llm live); the others come from the tape;',
    '                      repeatable',
    '  --live-after STEP   LLM calls through STEP (as tapedeck show numbers steps) come from the tape, the later',
    '                      ones go live (implies --llm live); tool calls still come from the tape or are blocked',
    '  --mock FILE         YAML of mocked answers (tool [+ arguments] -> result; route [+ method, path] -> status, body),',
    '                      asked before the tape; marked match "mock" on the replay tape',
    ...FAULT_USAGE,
    ...EXPECT_USAGE,
    '  -- COMMAND ARGS...  wrapper mode, as for record: run COMMAND against this replay, exit with its code',
    '  --sandbox           with -- COMMAND (Linux): run it where nothing but tapedeck is reachable',
    '  (--dir, --store, --namespace, --port, --host, --route, --config, --allow-host, --verbose, --connect-timeout,',
    '   --response-timeout, --idle-timeout, --shutdown-timeout as for record)',
  ].join('\n'),
  options: {
    ...SERVE_OPTIONS,
    'on-miss': { type: 'string' },
    'save-as': { type: 'string' },
    timing: { type: 'string' },
    'side-effects': { type: 'string' },
    'exact-only': { type: 'boolean' },
    explain: { type: 'boolean' },
    'no-match-headers': { type: 'boolean' },
    threshold: { type: 'string' },
    llm: { type: 'string' },
    model: { type: 'string', multiple: true },
    'system-prompt': { type: 'string', multiple: true },
    temperature: { type: 'string', multiple: true },
    'max-tokens': { type: 'string', multiple: true },
    'live-route': { type: 'string', multiple: true },
    'live-after': { type: 'string' },
    mock: { type: 'string' },
    ...FAULT_OPTIONS,
    expect: { type: 'string' },
  },
  deprecated: {
    'only-route': {
      option: { type: 'string', multiple: true },
      instead: '--live-route ROUTE',
      fold: renamedList('only-route', 'live-route'),
    },
  },
  allowPositionals: true,
  async run(ctx) {
    const settings = serveSettings(ctx, { usage: 'tapedeck replay NAME [flags] [-- COMMAND ARGS...]', tapeRef: true, replay: true });
    const { config, log } = settings;
    const flags = replayFlags(ctx, settings);
    // --tape may be a name, `latest`, a unique prefix or a path to a .jsonl anywhere (the replay tape goes beside it);
    // resolved once every flag is known to be good.
    return withStore(config, async (store) => {
      const ref = await store.resolve(settings.tape);
      const tape = ref.name;
      if (flags.saveAs === tape) throw new TapedeckError('BAD_ARGS', '--save-as must name a different tape than the one replayed');
      // A name in --expect the recording never called is a typo: refused before anything runs.
      if (flags.expected !== undefined && flags.expected.names.size > 0)
        refuseUnknownExpectNames((await ref.store.load(tape, { resolveFiles: false })).exchanges, flags.expected, tape);
      const options = replayOptions(settings, flags, tape, ref.store);
      // --expect: once the run has ended, the recorded calls it never made fail it (the agent's own failure first).
      let replayName = flags.saveAs ?? tape;
      const expected = flags.expected;
      const after =
        expected === undefined
          ? undefined
          : async (code: number): Promise<number> => {
              const verdict = await checkExpected(ref.store, tape, replayName, expected);
              noticeLines(ctx, verdict.lines);
              return verdict.failed && code === 0 ? 1 : code;
            };
      const named = (proxy: RunningProxy): (string | Said)[] => {
        replayName = proxy.writer.name;
        return startedLines(flags, tape, proxy);
      };
      if (ctx.rest.length > 0) return runWrapped(ctx, options, log, { started: named, ...(after ? { after } : {}) });
      const proxy = await startProxy(options);
      noticeLines(ctx, named(proxy));
      return serveUntilSignal(proxy, ref.store, ctx, log, after);
    });
  },
};

/** What the replay flags say, each checked (and its files read) before the tape is looked up. */
interface ReplayFlags {
  onMiss: OnMiss;
  timing: Timing;
  saveAs: string | undefined;
  exactOnly: boolean;
  threshold: number | undefined;
  llm: 'tape' | 'live';
  liveAfter: number | undefined;
  mockFile: string | undefined;
  mocks: Mocks | undefined;
  plan: OverridePlan;
  faults: ReturnType<typeof faultPlanFrom>;
  expected: ExpectSpec | undefined;
  sideEffectsFile: string | undefined;
  sideEffects: SideEffectsFile | undefined;
  noMatchHeaders: boolean;
}

function replayFlags(ctx: CommandContext, settings: ServeSettings): ReplayFlags {
  const onMiss = parseOnMiss(stringValue(ctx.values, 'on-miss'));
  const timing = parseTiming(stringValue(ctx.values, 'timing'));
  const saveAs = stringValue(ctx.values, 'save-as');
  if (saveAs !== undefined) validateTapeName(saveAs);
  if (saveAs === settings.tape) throw new TapedeckError('BAD_ARGS', '--save-as must name a different tape than the one replayed');
  const exactOnly = ctx.values['exact-only'] === true;
  const threshold = parseThreshold(stringValue(ctx.values, 'threshold'));
  const liveRoutes = stringList(ctx.values, 'live-route');
  const liveAfterText = stringValue(ctx.values, 'live-after');
  if (liveAfterText !== undefined && !/^\d+$/.test(liveAfterText))
    throw new TapedeckError('BAD_ARGS', `--live-after needs a step number as tapedeck show numbers them (got "${liveAfterText}")`);
  const liveAfter = liveAfterText === undefined ? undefined : Number(liveAfterText);
  const impliesLive = liveRoutes.length > 0 || liveAfter !== undefined;
  const llm = impliesLive ? parseLlm(stringValue(ctx.values, 'llm') ?? 'live') : parseLlm(stringValue(ctx.values, 'llm'));
  if (impliesLive && llm !== 'live')
    throw new TapedeckError('BAD_ARGS', '--live-route and --live-after make some LLM calls live: not with --llm tape');
  const mockFile = stringValue(ctx.values, 'mock');
  const mocks = mockFile === undefined ? undefined : loadMocks(mockFile);
  for (const r of liveRoutes)
    if (!r.startsWith('/')) throw new TapedeckError('BAD_ARGS', `--live-route needs a route prefix such as /openai (got "${r}")`);
  const plan = buildOverridePlan(parseOverrides(ctx.values, llm), { families: modelFamilies(settings.config.prices), liveRoutes });
  const faults = faultPlanFrom(ctx.values);
  const expected = expectFrom(ctx.values);
  const sideEffectsFile = stringValue(ctx.values, 'side-effects');
  const sideEffects = sideEffectsFile === undefined ? undefined : loadSideEffects(sideEffectsFile);
  const noMatchHeaders = ctx.values['no-match-headers'] === true;
  return {
    onMiss,
    timing,
    saveAs,
    exactOnly,
    threshold,
    llm,
    liveAfter,
    mockFile,
    mocks,
    plan,
    faults,
    expected,
    sideEffectsFile,
    sideEffects,
    noMatchHeaders,
  };
}

/** The replay proxy's options: the tape, its matcher and responders, and what the flags asked for. */
function replayOptions(settings: ServeSettings, flags: ReplayFlags, tape: string, store: TapeStore): ReplayOptions {
  const { config } = settings;
  const { onMiss, timing, saveAs, exactOnly, threshold, llm, liveAfter, mockFile, mocks, plan, faults, sideEffects } = flags;
  return {
    ...proxyBase({ ...settings, tape }, store),
    // The tape's recorded routes win over the built-in defaults; routes chosen now win over the tape.
    routes: settings.routeSources.chosen,
    fallbackRoutes: settings.routeSources.defaults,
    mode: 'replay',
    whenTapeFails: config.whenTapeFails,
    onMiss,
    timing,
    ...(saveAs !== undefined ? { saveAs } : {}),
    matcher: (loaded) =>
      createReplayMatcher(loaded.exchanges, {
        eager: true,
        ...matchingOptions(config),
        semantic: exactOnly ? false : { ...config.match.semantic, ...(threshold !== undefined ? { threshold } : {}) },
      }),
    // LLM calls live with the overrides (--llm live); MCP: tapedeck is the server in replay (sessions, ids,
    // notifications, side effects blocked).
    responders: (loaded) => [
      ...(mocks && mocks.http.length > 0 ? [createHttpMockResponder(mocks)] : []),
      ...(llm === 'live'
        ? [createLlmLiveResponder(plan, liveAfter === undefined ? {} : { fromTapeFirst: llmCallsThrough(loaded.exchanges, liveAfter) })]
        : []),
      // OAuth before MCP: a protected route's challenge, its metadata and the authorization server, from the tape.
      createOAuthResponder(),
      createMcpResponder({
        ...(sideEffects ? { sideEffects } : {}),
        ...(mocks ? { mocks } : {}),
        ...(faults ? { faults: faults.plan } : {}),
      }),
    ],
    llm,
    // Realtime / Live sessions go live whole, the overrides in their URL and setup (--live-after counts HTTP calls only).
    ...(llm === 'live' && liveAfter === undefined
      ? {
          sessionLive: (call: { route: string; provider: string; model?: string | undefined }) =>
            isLiveCall(plan, call) ? overridesFor(plan, call) : undefined,
        }
      : {}),
    ...planHeader(plan),
    ...(liveAfter !== undefined ? { liveAfter } : {}),
    ...(mockFile !== undefined ? { mocks: mockFile } : {}),
    ...(sideEffects ? { allowLive: allowLiveFor(createSideEffectPolicy({ file: sideEffects })) } : {}),
    ...(flags.noMatchHeaders || !config.matchHeaders ? { matchHeaders: false } : {}),
    ...(faults ? { faults: faults.plan } : {}),
  };
}

/** What the replay says once it has started: the plan of the run, its warnings, and the tape it saves. */
function startedLines(flags: ReplayFlags, tape: string, proxy: RunningProxy): (string | Said)[] {
  const { llm, plan, liveAfter, mocks, faults, onMiss, sideEffects, sideEffectsFile } = flags;
  const exchanges = proxy.source?.exchanges ?? [];
  return [
    ...formatPlan(
      planRun(exchanges, { llm, plan, ...(liveAfter !== undefined ? { fromTapeFirst: llmCallsThrough(exchanges, liveAfter) } : {}) }),
    ),
    ...(liveAfter === undefined
      ? []
      : [
          `this run: LLM calls through step ${liveAfter} come from the tape (${llmCallsThrough(exchanges, liveAfter)} call(s)), the later ones go live`,
        ]),
    ...(mocks ? [`this run: mocks from ${mocks.file}: ${mocks.tools.length} tool(s), ${mocks.http.length} HTTP route(s)`] : []),
    ...(faults ? faults.rules.map((r) => `this run: fault ${r}`) : []),
    ...sideEffectNotes(exchanges, {
      tape,
      onMiss,
      ...(sideEffects && sideEffectsFile !== undefined ? { file: { path: sideEffectsFile, data: sideEffects } } : {}),
    }).map(warning),
    ...cutWhileRecording(exchanges).map(warning),
    ...(proxy.source?.problems ?? []).map((p) => warning(`${tape} line ${p.line}: ${p.message}`)),
    `replaying "${tape}" (${proxy.source?.exchanges.length ?? 0} exchanges, on-miss ${onMiss}); saving this run as "${proxy.writer.name}"`,
  ];
}

/**
 * Answers the tape has only the start of (cut mid-stream while recording: the upstream reset, or the client left):
 * replay serves each one cut at the same point, so say so before a client is surprised by it.
 */
function cutWhileRecording(exchanges: readonly Exchange[]): string[] {
  const cut = toSteps(exchanges).filter((s) => s.exchange.error?.phase === 'stream' && s.exchange.mcp?.method !== STREAM_METHOD);
  if (cut.length === 0) return [];
  const why = (s: (typeof cut)[number]): string =>
    `step ${s.index}${s.exchange.error?.code === 'CLIENT_CLOSED' ? ' (the client left mid-answer)' : ` (${s.exchange.error?.code ?? 'cut'})`}`;
  return [
    `${cut.length} answer(s) on the tape were cut mid-stream while recording: ${cut.slice(0, 5).map(why).join(', ')}` +
      `${cut.length > 5 ? ', ...' : ''}; replay serves them cut at the same point, never as complete answers`,
  ];
}

/** How many LLM calls the tape has at steps 0..step (the steps `tapedeck show` numbers). */
function llmCallsThrough(exchanges: readonly Exchange[], step: number): number {
  return toSteps(exchanges).filter((s) => s.index <= step && s.exchange.llm !== undefined).length;
}

export function parseOnMiss(value: string | undefined): OnMiss {
  if (value === undefined) return 'strict';
  if (value === 'strict' || value === 'lenient' || value === 'live') return value;
  throw new TapedeckError('BAD_ARGS', `--on-miss must be strict, lenient or live (got "${value}")`);
}

export function parseTiming(value: string | undefined): Timing {
  if (value === undefined || value === 'instant') return { mode: 'instant' };
  if (value === 'recorded') return { mode: 'recorded' };
  const factor = Number(value);
  if (value.trim() !== '' && Number.isFinite(factor) && factor >= 0) return factor === 0 ? { mode: 'instant' } : { mode: 'scaled', factor };
  throw new TapedeckError('BAD_ARGS', `--timing must be instant, recorded or a non-negative number (got "${value}")`);
}

export function parseLlm(value: string | undefined): 'tape' | 'live' {
  if (value === undefined || value === 'tape') return 'tape';
  if (value === 'live') return 'live';
  throw new TapedeckError('BAD_ARGS', `--llm must be tape or live (got "${value}")`);
}

/**
 * The --llm live overrides, each `VALUE` or `ROUTE=VALUE` and repeatable; each needs --llm live, numbers must be
 * numbers, @FILE is read now.
 */
export function parseOverrides(values: ParsedValues, llm: 'tape' | 'live'): OverrideInputs {
  const models = stringList(values, 'model');
  const systems = stringList(values, 'system-prompt');
  const temperatures = stringList(values, 'temperature');
  const maxTokens = stringList(values, 'max-tokens');
  const given = [
    models.length > 0 && '--model',
    systems.length > 0 && '--system-prompt',
    temperatures.length > 0 && '--temperature',
    maxTokens.length > 0 && '--max-tokens',
  ].filter(Boolean);
  if (given.length > 0 && llm !== 'live')
    throw new TapedeckError(
      'BAD_ARGS',
      `${given.join(', ')} ${given.length === 1 ? 'needs' : 'need'} --llm live (the default replays the model's answers from the tape)`,
    );
  const each = <T>(list: string[], parse: (v: string) => T): (T | { route: string; value: T })[] =>
    list.map((text) => {
      const targeted = splitRouteValue(text);
      return targeted === undefined ? parse(text) : { route: targeted.route, value: parse(targeted.value) };
    });
  return {
    model: each(models, (model) => {
      if (model.trim() === '') throw new TapedeckError('BAD_ARGS', '--model needs a model name');
      return model;
    }),
    systemPrompt: each(systems, (system) => (system.startsWith('@') ? readPromptFile(system.slice(1)) : system)),
    temperature: each(temperatures, (temperature) => {
      const t = Number(temperature);
      if (temperature.trim() === '' || !Number.isFinite(t) || t < 0 || t > 2)
        throw new TapedeckError('BAD_ARGS', `--temperature must be a number from 0 to 2 (got "${temperature}")`);
      return t;
    }),
    maxTokens: each(maxTokens, (n) => {
      if (!/^\d+$/.test(n) || Number(n) < 1)
        throw new TapedeckError('BAD_ARGS', `--max-tokens must be a positive whole number (got "${n}")`);
      return Number(n);
    }),
  };
}

/** A prompt file's text, less the one trailing newline an editor ends a file with (as `$(cat FILE)` drops it). */
function readPromptFile(file: string): string {
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new TapedeckError(
      'BAD_ARGS',
      `--system-prompt @${file}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
}

export function parseThreshold(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new TapedeckError('BAD_ARGS', `--threshold must be a number from 0 to 1 (got "${value}")`);
  return n;
}
