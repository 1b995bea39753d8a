/**
 * What a replay run will change, said before it starts: the tape's recorded LLM configuration (models, providers,
 * temperatures, seeds, tools lists) against this run's, and a determinism score in [0,1] for how reproducible the
 * run can be expected to be.
 *
 * Determinism is the mean over the tape's LLM calls of a per-call score:
 * - answered from the tape (`--llm tape`, the default): 1;
 * - asked live (`--llm live`): start at 1, then
 *   x (1 - 0.5 * min(T, 1)) for the effective temperature T (override, else recorded, else 1, the providers' default),
 *   x 0.9 without a seed (a seed pins sampling where the provider supports it),
 *   x 0.6 when the model differs from the recorded one,
 *   x 0.8 when the system prompt is overridden.
 * A tape without LLM calls scores 1 (tool calls come from the tape either way).
 */
import type { LlmOverrides } from '../replay/llm-overrides.js';
import { isLiveCall, overridesFor, type OverridePlan } from '../replay/override-targets.js';
import type { Exchange, LlmMeaning } from '../tape/schema.js';
import { runConfig, type ConfigChange, type RunConfig } from './run-config.js';
import { orderExchanges } from './steps.js';

export interface PlannedChange extends ConfigChange {
  /** How many of the tape's LLM calls it concerns. */
  calls: number;
  /** The route those calls are on, when the tape's LLM calls use more than one route. */
  route?: string;
}

export interface RunPlan {
  llmCalls: number;
  /** The tape's configuration, as `tapedeck diff` reads it. */
  recorded: RunConfig;
  changes: PlannedChange[];
  /** Routes whose LLM calls stay on the tape while others go live. */
  fromTape: { route: string; calls: number }[];
  determinism: number;
}

/** How a run treats its LLM calls: all from the tape, or live with plain overrides, or live as a targeting plan says. */
export interface RunSpec {
  llm: 'tape' | 'live';
  overrides?: LlmOverrides;
  plan?: OverridePlan;
  /** `--live-after`: the first N LLM calls (in timeline order) stay on the tape. */
  fromTapeFirst?: number;
}

/** One recorded LLM call, and whether this run asks it live and with what. */
interface PlannedCall {
  route: string;
  meaning: LlmMeaning;
  live: boolean;
  overrides: LlmOverrides;
}

function plannedCalls(exchanges: readonly Exchange[], run: RunSpec): PlannedCall[] {
  const out: PlannedCall[] = [];
  let seen = 0;
  for (const ex of orderExchanges(exchanges)) {
    const m = ex.llm;
    if (m === undefined) continue;
    seen++;
    if (m.errorType !== undefined) continue;
    const target = { route: ex.route, provider: m.provider, model: m.model };
    const forked = run.fromTapeFirst !== undefined && seen <= run.fromTapeFirst;
    const live = run.llm === 'live' && !forked && (run.plan === undefined || isLiveCall(run.plan, target));
    const overrides = !live ? {} : run.plan !== undefined ? overridesFor(run.plan, target) : (run.overrides ?? {});
    out.push({ route: ex.route, meaning: m, live, overrides });
  }
  return out;
}

const maxTokensOf = (c: LlmMeaning): unknown =>
  c.params.max_tokens ?? c.params.max_completion_tokens ?? c.params.max_output_tokens ?? c.params.maxOutputTokens;

export function planRun(exchanges: readonly Exchange[], run: RunSpec): RunPlan {
  const recorded = runConfig(orderExchanges(exchanges));
  const calls = plannedCalls(exchanges, run);
  const routes = [...new Set(calls.map((c) => c.route))];
  const perRoute = routes.length > 1;
  const changes: PlannedChange[] = [];
  const fromTape: RunPlan['fromTape'] = [];
  for (const route of routes) {
    const mine = calls.filter((c) => c.route === route);
    const live = mine.filter((c) => c.live);
    const at = perRoute ? { route } : {};
    const recordedHere = runConfig(orderExchanges(exchanges.filter((e) => e.route === route)));
    if (live.length < mine.length && run.llm === 'live') fromTape.push({ route, calls: mine.length - live.length });
    if (live.length === 0) continue;
    changes.push({ field: 'llm', original: 'tape', replay: 'live', calls: live.length, ...at });
    const add = (
      field: string,
      original: unknown,
      pick: (o: LlmOverrides) => unknown,
      differs: (c: PlannedCall, to: unknown) => boolean,
    ): void => {
      const byValue = new Map<string, { to: unknown; n: number }>();
      for (const c of live) {
        const to = pick(c.overrides);
        if (to === undefined || !differs(c, to)) continue;
        const key = JSON.stringify(to);
        byValue.set(key, { to, n: (byValue.get(key)?.n ?? 0) + 1 });
      }
      for (const { to, n } of byValue.values()) changes.push({ field, original, replay: to, calls: n, ...at });
    };
    add(
      'model',
      recordedHere.model,
      (o) => o.model,
      (c, to) => c.meaning.model !== to,
    );
    add(
      'temperature',
      recordedHere.temperature,
      (o) => o.temperature,
      (c, to) => c.meaning.params.temperature !== to,
    );
    add(
      'max tokens',
      '(as recorded)',
      (o) => o.maxTokens,
      (c, to) => maxTokensOf(c.meaning) !== to,
    );
    add(
      'system prompt',
      '(as recorded)',
      (o) => (o.systemPrompt === undefined ? undefined : o.systemPrompt.length > 60 ? `${o.systemPrompt.slice(0, 57)}...` : o.systemPrompt),
      () => true,
    );
  }
  return { llmCalls: calls.length, recorded, changes, fromTape, determinism: scoreCalls(calls) };
}

/** Determinism of a run with the same overrides for every call (see the module comment). */
export function determinism(calls: readonly LlmMeaning[], run: { llm: 'tape' | 'live'; overrides?: LlmOverrides }): number {
  return scoreCalls(calls.map((meaning) => ({ route: '', meaning, live: run.llm === 'live', overrides: run.overrides ?? {} })));
}

function scoreCalls(calls: readonly PlannedCall[]): number {
  if (calls.length === 0) return 1;
  let sum = 0;
  for (const { meaning: c, live, overrides: o } of calls) {
    if (!live) {
      sum += 1;
      continue;
    }
    const recordedT =
      typeof c.params.temperature === 'number'
        ? c.params.temperature
        : typeof c.params.temperature === 'string'
          ? Number(c.params.temperature)
          : undefined;
    const t = o.temperature ?? recordedT ?? 1;
    let s = 1 - 0.5 * Math.min(Math.max(t, 0), 1);
    if (c.params.seed === undefined) s *= 0.9;
    if (o.model !== undefined && o.model !== c.model) s *= 0.6;
    if (o.systemPrompt !== undefined) s *= 0.8;
    sum += s;
  }
  return Math.round((sum / calls.length) * 1000) / 1000;
}

/** The plan as lines for the terminal. */
export function formatPlan(plan: RunPlan): string[] {
  const r = plan.recorded;
  const show = (v: unknown): string => (v === null ? 'none' : Array.isArray(v) ? v.join(', ') : String(v));
  const lines = [
    `recorded: ${plan.llmCalls} LLM call(s); model ${show(r.model)}; provider ${show(r.provider)}; ` +
      `temperature ${show(r.temperature)}; seed ${show(r.seed)}; tools ${show(r.tools)}`,
  ];
  if (plan.changes.length === 0 && plan.fromTape.length === 0) lines.push('this run: same configuration as recorded');
  for (const c of plan.changes)
    lines.push(
      `this run: ${c.route !== undefined ? `${c.route}: ` : ''}${c.field} ${JSON.stringify(c.original)} -> ${JSON.stringify(c.replay)} (${c.calls} call(s))`,
    );
  for (const t of plan.fromTape) lines.push(`this run: ${t.route}: answered from the tape (${t.calls} call(s))`);
  lines.push(
    `determinism: ${plan.determinism.toFixed(2)} (1 = answers replayed from the tape; the formula: docs/modified-replay.md#determinism)`,
  );
  return lines;
}
