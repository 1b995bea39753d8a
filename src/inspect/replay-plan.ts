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
import type { Exchange, LlmMeaning } from '../tape/schema.js';
import { runConfig, type ConfigChange, type RunConfig } from './run-config.js';
import { orderExchanges } from './steps.js';

export interface PlannedChange extends ConfigChange {
  /** How many of the tape's LLM calls it concerns. */
  calls: number;
}

export interface RunPlan {
  llmCalls: number;
  /** The tape's configuration, as `tapedeck diff` reads it. */
  recorded: RunConfig;
  changes: PlannedChange[];
  determinism: number;
}

export function planRun(exchanges: readonly Exchange[], run: { llm: 'tape' | 'live'; overrides?: LlmOverrides }): RunPlan {
  const recorded = runConfig(orderExchanges(exchanges));
  const calls = exchanges.map((e) => e.llm).filter((m): m is LlmMeaning => m !== undefined && m.errorType === undefined);
  const o = run.overrides ?? {};
  const changes: PlannedChange[] = [];
  const count = (pred: (c: LlmMeaning) => boolean): number => calls.filter(pred).length;
  if (run.llm === 'live') changes.push({ field: 'llm', original: 'tape', replay: 'live', calls: calls.length });
  if (o.model !== undefined) {
    const n = count((c) => c.model !== o.model);
    if (n > 0) changes.push({ field: 'model', original: recorded.model, replay: o.model, calls: n });
  }
  if (o.temperature !== undefined) {
    const n = count((c) => c.params.temperature !== o.temperature);
    if (n > 0) changes.push({ field: 'temperature', original: recorded.temperature, replay: o.temperature, calls: n });
  }
  if (o.maxTokens !== undefined) {
    const n = count(
      (c) =>
        (c.params.max_tokens ?? c.params.max_completion_tokens ?? c.params.max_output_tokens ?? c.params.maxOutputTokens) !== o.maxTokens,
    );
    if (n > 0) changes.push({ field: 'max tokens', original: '(as recorded)', replay: o.maxTokens, calls: n });
  }
  if (o.systemPrompt !== undefined)
    changes.push({
      field: 'system prompt',
      original: '(as recorded)',
      replay: o.systemPrompt.length > 60 ? `${o.systemPrompt.slice(0, 57)}...` : o.systemPrompt,
      calls: calls.length,
    });
  return { llmCalls: calls.length, recorded, changes, determinism: determinism(calls, run) };
}

export function determinism(calls: readonly LlmMeaning[], run: { llm: 'tape' | 'live'; overrides?: LlmOverrides }): number {
  if (calls.length === 0 || run.llm === 'tape') return 1;
  const o = run.overrides ?? {};
  let sum = 0;
  for (const c of calls) {
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
  if (plan.changes.length === 0) lines.push('this run: same configuration as recorded');
  for (const c of plan.changes)
    lines.push(`this run: ${c.field} ${JSON.stringify(c.original)} -> ${JSON.stringify(c.replay)} (${c.calls} call(s))`);
  lines.push(`determinism: ${plan.determinism.toFixed(2)} (1 = answers replayed from the tape; see the README for the formula)`);
  return lines;
}
