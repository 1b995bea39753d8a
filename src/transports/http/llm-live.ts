/**
 * LLM calls live (a modified replay): they go to the real upstream, rewritten with the overrides that target them
 * (model, system prompt, temperature, max tokens; see `replay/override-targets.ts`), while MCP and HTTP tool calls
 * are still answered from the tape by the responders and the matcher behind this one. A call the plan keeps on the
 * tape (not on a live route) is passed on to them too. Each live call lands on the replay tape with what was
 * overridden.
 */
import { applyOverrides, type LlmOverrides } from '../../replay/llm-overrides.js';
import { isLiveCall, overridesFor, type OverridePlan } from '../../replay/override-targets.js';
import { requestMeaning } from '../../http/request-meaning.js';
import type { ReplayResponder } from '../../http/types.js';
import { parseJson } from '../../tape/json-depth.js';

/**
 * The responder for a plan; plain overrides (every call live, every override untargeted) are accepted too.
 * `fromTapeFirst`: the first N LLM requests of the run are answered from the tape, those after go live (`--live-after`).
 */
export function createLlmLiveResponder(plan: OverridePlan | LlmOverrides = {}, opts: { fromTapeFirst?: number } = {}): ReplayResponder {
  let seen = 0;
  const targeted: OverridePlan =
    'rules' in plan
      ? (plan as OverridePlan)
      : {
          rules: Object.entries(plan)
            .filter(([, v]) => v !== undefined)
            .map(([field, value]) => ({ field: field as keyof LlmOverrides, value: value as string | number })),
          families: {},
        };
  return {
    name: 'llm-live',
    async decide(req) {
      const { api, llm } = requestMeaning(req);
      if (api === undefined) return undefined;
      if (opts.fromTapeFirst !== undefined && ++seen <= opts.fromTapeFirst) return undefined;
      const call = { route: req.route.prefix, provider: api.provider, model: llm?.model };
      if (!isLiveCall(targeted, call)) return undefined;
      const overrides = overridesFor(targeted, call);
      if (Object.keys(overrides).length === 0) return { live: { reason: 'llm live: the model is asked again', notes: { llm: 'live' } } };
      // The body to rewrite: a copy of its own (the adapter changes it in place).
      let body: unknown;
      try {
        body = parseJson(req.body.toString('utf8'));
      } catch {
        body = undefined;
      }
      const json = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
      // Not a JSON body: nothing to rewrite, the upstream will answer as it does.
      if (json === undefined) return { live: { reason: 'llm live (body not JSON: sent unchanged)', notes: { llm: 'live' } } };
      const out = applyOverrides(api, req.path, json, overrides);
      const changed = Object.keys(out.applied);
      return {
        live: {
          path: out.path,
          body: Buffer.from(JSON.stringify(out.body)),
          reason: changed.length > 0 ? `llm live with ${changed.join(', ')} overridden` : 'llm live (overrides already as recorded)',
          notes: { llm: 'live', overrides: out.applied },
        },
      };
    },
  };
}
