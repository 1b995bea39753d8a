/**
 * LLM calls live (a modified replay): they go to the real upstream, rewritten with the run's overrides (model, system prompt,
 * temperature, max tokens), while MCP and HTTP tool calls are still answered from the tape by the responders and
 * the matcher behind this one. Each live call lands on the replay tape with what was overridden.
 */
import { detectLlmApi } from '../providers/index.js';
import { applyOverrides, type LlmOverrides } from '../replay/llm-overrides.js';
import type { ReplayResponder } from './types.js';

export function createLlmLiveResponder(overrides: LlmOverrides = {}): ReplayResponder {
  const any = Object.values(overrides).some((v) => v !== undefined);
  return {
    name: 'llm-live',
    async handle(req, ctx) {
      const api = detectLlmApi(req.route.prefix, req.path, req.method, req.route.upstream);
      if (api === undefined) return undefined;
      if (!any) return ctx.forwardLive(req, { reason: 'llm live: the model is asked again', notes: { llm: 'live' } });
      let body: unknown;
      try {
        body = JSON.parse(req.body.toString('utf8'));
      } catch {
        body = undefined;
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        // Not a JSON body: nothing to rewrite, the upstream will answer as it does.
        return ctx.forwardLive(req, { reason: 'llm live (body not JSON: sent unchanged)', notes: { llm: 'live' } });
      }
      const out = applyOverrides(api, req.path, body as Record<string, unknown>, overrides);
      const changed = Object.keys(out.applied);
      return ctx.forwardLive(
        { ...req, path: out.path },
        {
          body: Buffer.from(JSON.stringify(out.body)),
          reason: changed.length > 0 ? `llm live with ${changed.join(', ')} overridden` : 'llm live (overrides already as recorded)',
          notes: { llm: 'live', overrides: out.applied },
        },
      );
    },
  };
}
