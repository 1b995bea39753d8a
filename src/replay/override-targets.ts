/**
 * Which LLM calls of a modified replay go live, and which overrides each one gets.
 *
 * An override targets what it means:
 * - a model (`gpt-4.1`) applies to the calls of the provider it belongs to (its adapter's model families, or a price
 *   file's): the calls
 *   that provider served, or whose recorded model is of that provider's families (an OpenAI-compatible gateway
 *   serving a GPT model);
 * - `ROUTE=VALUE` (`/anthropic=claude-haiku-4-5`) applies to the calls on that route;
 * - the system prompt, temperature and max tokens take the same targets: with `ROUTE=VALUE` that route, without
 *   one the calls the model overrides target (all live calls when no model is overridden).
 * When several rules set one field for a call, a route's wins over a provider's, which wins over an untargeted one.
 * Live routes, when given, limit which LLM calls go live at all; the others are answered from the tape.
 */
import { TapedeckError } from '../errors.js';
import { providerOfModel, type FamilyMap } from '../config/prices.js';
import { providerFamilies } from '../providers/registry.js';
import type { LlmOverrides } from '../providers/types.js';

export type OverrideField = keyof LlmOverrides;

/** One override: a field, its value, and the calls it targets (a route, a provider, or every live call). */
export interface OverrideRule {
  field: OverrideField;
  value: string | number;
  route?: string;
  provider?: string;
}

export interface OverridePlan {
  rules: OverrideRule[];
  /** Only LLM calls on these route prefixes go live; undefined: every LLM call. */
  liveRoutes?: string[] | undefined;
  families: FamilyMap;
}

/** One LLM call as targeting sees it. */
export interface LlmCallTarget {
  route: string;
  provider: string;
  model?: string | undefined;
}

/** The raw values given for each field, each either `VALUE` or `ROUTE=VALUE` (already parsed as the field's type). */
export type OverrideInputs = {
  [F in OverrideField]?: readonly (NonNullable<LlmOverrides[F]> | { route: string; value: NonNullable<LlmOverrides[F]> })[];
};

/** `ROUTE=VALUE`, where ROUTE is a route prefix (`/openai`), or undefined when the text is a plain value. */
export function splitRouteValue(text: string): { route: string; value: string } | undefined {
  const m = /^(\/[^\s=]*)=([\s\S]*)$/.exec(text);
  return m ? { route: (m[1] as string).replace(/\/+$/, '') || '/', value: m[2] as string } : undefined;
}

/**
 * The rules for the given overrides. A model without a route must belong to exactly one provider's families, else
 * UNKNOWN_MODEL_PROVIDER says so (the caller may target a route instead).
 */
export function buildOverridePlan(inputs: OverrideInputs, opts: { families: FamilyMap; liveRoutes?: readonly string[] }): OverridePlan {
  const rules: OverrideRule[] = [];
  const modelTargets: { route?: string; provider?: string }[] = [];
  // The adapters' model families, with a price file's over them provider by provider.
  const families: FamilyMap = { ...providerFamilies(), ...opts.families };
  for (const given of inputs.model ?? []) {
    if (typeof given === 'object') {
      rules.push({ field: 'model', value: given.value, route: given.route });
      modelTargets.push({ route: given.route });
      continue;
    }
    const owner = providerOfModel(given, families);
    if (owner === null || 'ambiguous' in owner) {
      const why =
        owner === null
          ? `no provider family in the price table claims "${given}"`
          : `"${given}" matches the families of ${owner.ambiguous.join(' and ')}`;
      throw new TapedeckError('UNKNOWN_MODEL_PROVIDER', `cannot tell which provider's calls the model "${given}" is for: ${why}`, {
        details: { model: given, ...(owner !== null ? { providers: owner.ambiguous } : {}) },
      });
    }
    if (rules.some((r) => r.field === 'model' && r.provider === owner.provider && r.route === undefined))
      throw new TapedeckError('BAD_ARGS', `two models given for the provider ${owner.provider}: give one, or target routes`);
    rules.push({ field: 'model', value: given, provider: owner.provider });
    modelTargets.push({ provider: owner.provider });
  }
  for (const field of ['systemPrompt', 'temperature', 'maxTokens'] as const) {
    for (const given of inputs[field] ?? []) {
      if (typeof given === 'object') rules.push({ field, value: given.value, route: given.route });
      else if (modelTargets.length === 0) rules.push({ field, value: given });
      else for (const t of modelTargets) rules.push({ field, value: given, ...t });
    }
  }
  const routes = opts.liveRoutes?.map((r) => r.replace(/\/+$/, '') || '/');
  return { rules, ...(routes && routes.length > 0 ? { liveRoutes: routes } : {}), families };
}

/** Whether a call goes live under the plan (with live LLM calls on). */
export function isLiveCall(plan: OverridePlan, call: LlmCallTarget): boolean {
  return plan.liveRoutes === undefined || plan.liveRoutes.includes(call.route);
}

/** Whether a rule's target covers the call. */
export function ruleTargets(rule: OverrideRule, call: LlmCallTarget, families: FamilyMap): boolean {
  if (rule.route !== undefined) return rule.route === call.route;
  if (rule.provider !== undefined) {
    if (call.provider === rule.provider) return true;
    if (call.model === undefined) return false;
    const owner = providerOfModel(call.model, families);
    return owner !== null && 'provider' in owner && owner.provider === rule.provider;
  }
  return true;
}

/** The overrides for one call: per field, the most specific rule that targets it (route, then provider, then any). */
export function overridesFor(plan: OverridePlan, call: LlmCallTarget): LlmOverrides {
  const out: Record<string, unknown> = {};
  const rank = (r: OverrideRule): number => (r.route !== undefined ? 2 : r.provider !== undefined ? 1 : 0);
  const best = new Map<OverrideField, OverrideRule>();
  for (const rule of plan.rules) {
    if (!ruleTargets(rule, call, plan.families)) continue;
    const held = best.get(rule.field);
    if (held === undefined || rank(rule) > rank(held)) best.set(rule.field, rule);
  }
  for (const [field, rule] of best) out[field] = rule.value;
  return out as LlmOverrides;
}

/**
 * The plan as the replay tape's header keeps it: `overrides` has each field's value (a list when targets set
 * different values; the shape `tapedeck diff` reads), `targeted` the rules that target a route or a provider.
 */
export function planHeader(plan: OverridePlan): { overrides?: Record<string, unknown>; targeted?: OverrideRule[]; liveRoutes?: string[] } {
  const values = new Map<string, unknown[]>();
  for (const r of plan.rules) {
    const list = values.get(r.field) ?? [];
    if (!list.includes(r.value)) list.push(r.value);
    values.set(r.field, list);
  }
  const flat = Object.fromEntries([...values].map(([field, list]) => [field, list.length === 1 ? list[0] : list]));
  const targeted = plan.rules.filter((r) => r.route !== undefined || r.provider !== undefined);
  return {
    ...(Object.keys(flat).length > 0 ? { overrides: flat } : {}),
    ...(targeted.length > 0 ? { targeted } : {}),
    ...(plan.liveRoutes ? { liveRoutes: plan.liveRoutes } : {}),
  };
}
