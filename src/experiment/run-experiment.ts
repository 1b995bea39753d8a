/**
 * An experiment: the same agent run once per configuration (and `repeat` times each) under a modified replay of
 * one tape (LLM calls live with the configuration's overrides, tool calls from the tape, side effects blocked),
 * each run saved as a tape and diffed against the original. A run that fails (the agent exits non-zero, cannot
 * start, or its tape cannot be written) is kept in the results as failed, never dropped.
 *
 * The agent runs through `runAgentUnderReplay` (wrapper mode's `runUnder`), the one place that starts it.
 */
import type { Config } from '../config/config.js';
import { modelFamilies, priceTable } from '../config/prices.js';
import { isTapedeckError, TapedeckError } from '../errors.js';
import { createCostFn } from '../inspect/cost.js';
import { diffRuns, runOf, type Run, type RunDiff } from '../inspect/diff/diff.js';
import { embeddingSimilarity } from '../inspect/diff/embedding-similarity.js';
import type { OutputSimilarity } from '../inspect/diff/similarity.js';
import { pairedOutputs } from '../inspect/diff/step-deltas.js';
import type { Logger } from '../log.js';
import { createLlmLiveResponder } from '../transports/http/llm-live.js';
import { createMcpResponder } from '../transports/mcp/responder.js';
import { createOAuthResponder } from '../transports/oauth/responder.js';
import { runUnder } from '../run/run-under.js';
import type { ReplayOptions } from '../front/server.js';
import { buildOverridePlan, planHeader, type OverridePlan } from '../replay/override-targets.js';
import { createReplayMatcher } from '../replay/pipeline.js';
import { allowLiveFor, createSideEffectPolicy, type SideEffectsFile } from '../replay/side-effects.js';
import type { Route } from '../tape/schema.js';
import type { TapeStore } from '../tape/store.js';
import { createSecretDetector } from '../tape/redaction/secrets.js';
import { blockedCalls, runTrouble, upstreamFailures, type BlockedCall, type UpstreamFailure } from '../inspect/run-trouble.js';
import { combinations, type ExperimentAxes, type ExperimentConfig } from './combinations.js';

export interface ExperimentOptions {
  /** The store holding the tape to replay; each run is saved there too. */
  store: TapeStore;
  tape: string;
  config: Config;
  axes: ExperimentAxes;
  liveRoutes?: readonly string[];
  /** Runs per configuration (default 1). */
  repeat?: number;
  command: string;
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Where the agent's output goes (default: discarded). */
  stdio?: ReplayStdio;
  routes?: readonly Route[];
  fallbackRoutes?: readonly Route[];
  sideEffects?: SideEffectsFile;
  log?: Logger;
  /** Names of the run tapes: `<prefix>-<n>` (default `<tape>.exp-<timestamp>`). */
  prefix?: string;
  /** Told as each run ends. */
  onRun?: (run: ExperimentRun) => void;
}

export type ReplayStdio = 'ignore' | 'inherit' | ['ignore', number | 'ignore', number | 'ignore'];

export interface ExperimentRun {
  /** 1-based number of the configuration, and of the run within it. */
  config: number;
  label: string;
  repeat: number;
  /** The run's tape (also when it failed part way). */
  tape: string | null;
  exitCode: number | null;
  /** Why the run failed: the agent's exit code (and what went wrong on its tape), a command that would not start, an incomplete tape. */
  failed: string | null;
  diff: RunDiff | null;
  /** Calls replay refused to run in this run (side effects the tape has no recording of), by step. */
  blocked: BlockedCall[];
  /** Calls an upstream failed in this run (a 429 from the model, a 500), by step. */
  upstreamErrors: UpstreamFailure[];
}

export interface ExperimentResult {
  tape: string;
  configs: (ExperimentConfig & { overridesApplied: Record<string, unknown> })[];
  runs: ExperimentRun[];
  /** Per configuration, over its runs that did not fail: how much the score moves from run to run. */
  variance: ConfigVariance[];
}

export interface ConfigVariance {
  config: number;
  label: string;
  runs: number;
  failed: number;
  score: { mean: number; min: number; max: number; stdev: number } | null;
  /** How many different tool sequences the runs made (1: every run called the same tools in the same order). */
  toolSequences: number;
}

export async function runExperiment(opts: ExperimentOptions): Promise<ExperimentResult> {
  const repeat = opts.repeat ?? 1;
  const families = modelFamilies(opts.config.prices);
  const configs = combinations(opts.axes);
  // Every plan first: a model no provider claims fails the experiment before any run.
  const plans = configs.map((c) =>
    buildOverridePlan(c.overrides, { families, ...(opts.liveRoutes ? { liveRoutes: opts.liveRoutes } : {}) }),
  );
  const original = runOf(await opts.store.load(opts.tape));
  const costOf = createCostFn(priceTable(opts.config.prices));
  const prefix = opts.prefix ?? `${opts.tape}.exp-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const runs: ExperimentRun[] = [];
  let n = 0;
  for (const [i, c] of configs.entries()) {
    for (let r = 1; r <= repeat; r++) {
      n++;
      const saveAs = `${prefix}-${n}`;
      const run: ExperimentRun = {
        config: i + 1,
        label: c.label,
        repeat: r,
        tape: null,
        exitCode: null,
        failed: null,
        diff: null,
        blocked: [],
        upstreamErrors: [],
      };
      try {
        const out = await runAgentUnderReplay({ ...opts, plan: plans[i] as OverridePlan, saveAs });
        run.tape = out.tape;
        run.exitCode = out.exitCode;
        const replayed = runOf(await opts.store.load(out.tape));
        run.blocked = blockedCalls(replayed.exchanges);
        run.upstreamErrors = upstreamFailures(replayed.exchanges);
        if (out.exitCode !== 0) {
          const trouble = runTrouble(replayed.exchanges);
          run.failed = `the agent exited with code ${out.exitCode}${trouble ? `; on its tape: ${trouble}` : ''}`;
        }
        if (out.tapeFailure) run.failed = `the run's tape is incomplete: ${out.tapeFailure}`;
        const similarity = await outputSimilarity(original, replayed, opts.config);
        run.diff = diffRuns(original, replayed, { costOf, ...(similarity ? { similarity } : {}) });
      } catch (err) {
        if (!isTapedeckError(err)) throw err;
        run.failed = err.message;
      }
      runs.push(run);
      opts.onRun?.(run);
    }
  }
  return {
    tape: opts.tape,
    configs: configs.map((c, i) => ({ ...c, overridesApplied: planHeader(plans[i] as OverridePlan).overrides ?? {} })),
    runs,
    variance: configs.map((c, i) =>
      variance(
        i + 1,
        c.label,
        runs.filter((r) => r.config === i + 1),
      ),
    ),
  };
}

/**
 * Run the agent once under a modified replay of the tape, saving the run as `saveAs`. The narrow seam through
 * which an experiment starts an agent: wrapper mode's `runUnder`.
 */
export async function runAgentUnderReplay(
  opts: ExperimentOptions & { plan: OverridePlan; saveAs: string },
): Promise<{ exitCode: number; tape: string; tapeFailure?: string }> {
  const { config } = opts;
  const secrets = createSecretDetector(config.redact);
  const proxy: ReplayOptions = {
    mode: 'replay',
    tape: opts.tape,
    store: opts.store,
    // A run whose agent made no call is still a run: its (empty) tape is compared like any other.
    keepEmpty: true,
    host: '127.0.0.1',
    port: 0,
    routes: opts.routes ?? [],
    ...(opts.fallbackRoutes ? { fallbackRoutes: opts.fallbackRoutes } : {}),
    redact: config.redact,
    keyOptions: { ignoreFields: config.match.ignoreFields, secrets, secretQuery: config.redact.query },
    ...(opts.log ? { log: opts.log } : {}),
    allowHosts: config.allowHosts,
    onMiss: 'strict',
    saveAs: opts.saveAs,
    matcher: (loaded) =>
      createReplayMatcher(loaded.exchanges, {
        eager: true,
        ignoreFields: config.match.ignoreFields,
        whenExhausted: config.match.whenExhausted,
        secrets,
        secretQuery: config.redact.query,
        semantic: config.match.semantic,
      }),
    responders: [
      createLlmLiveResponder(opts.plan),
      createOAuthResponder(),
      createMcpResponder(opts.sideEffects ? { sideEffects: opts.sideEffects } : {}),
    ],
    llm: 'live',
    ...planHeader(opts.plan),
    ...(opts.sideEffects ? { allowLive: allowLiveFor(createSideEffectPolicy({ file: opts.sideEffects })) } : {}),
  };
  const result = await runUnder({
    proxy,
    command: opts.command,
    args: opts.args ?? [],
    ...(opts.env ? { env: opts.env } : {}),
    stdio: opts.stdio ?? 'ignore',
    forwardSignals: true,
  });
  if (result.tape.count === 0 && result.exitCode === 0)
    throw new TapedeckError('COMMAND_FAILED', `the agent made no request through tapedeck (is it configured from OPENAI_BASE_URL & co.?)`);
  return { exitCode: result.exitCode, tape: result.tape.name, ...(result.tapeFailure ? { tapeFailure: result.tapeFailure.message } : {}) };
}

/** Embeddings for output similarity when the config has an endpoint (as `tapedeck diff`); the word method when it fails. */
async function outputSimilarity(a: Run, b: Run, config: Config): Promise<OutputSimilarity | undefined> {
  const embeddings = config.match.semantic.embeddings;
  if (embeddings === undefined) return undefined;
  try {
    return await embeddingSimilarity(pairedOutputs(a, b), embeddings);
  } catch (err) {
    if (isTapedeckError(err) && err.code === 'EMBEDDINGS_FAILED') return undefined;
    throw err;
  }
}

function variance(config: number, label: string, runs: readonly ExperimentRun[]): ConfigVariance {
  const ok = runs.filter((r) => r.failed === null && r.diff !== null);
  const scores = ok.map((r) => (r.diff as RunDiff).score);
  const mean = scores.reduce((a, s) => a + s, 0) / (scores.length || 1);
  const stdev = Math.sqrt(scores.reduce((a, s) => a + (s - mean) ** 2, 0) / (scores.length || 1));
  const r4 = (x: number): number => Math.round(x * 10_000) / 10_000;
  const sequences = new Set(ok.map((r) => JSON.stringify((r.diff as RunDiff).toolSequenceDiff)));
  return {
    config,
    label,
    runs: runs.length,
    failed: runs.length - ok.length,
    score: scores.length === 0 ? null : { mean: r4(mean), min: Math.min(...scores), max: Math.max(...scores), stdev: r4(stdev) },
    toolSequences: sequences.size,
  };
}
