/**
 * A provider tapedeck does not ship, written the way a user would add one: one file, the adapter contract from the
 * library's public surface, registered with `registerProvider`. "Parrot" answers `POST .../v1/parrot/speak`:
 *
 *   request  {voice, persona, history: [{who: 'human'|'parrot', said}], settings: {temperature, max_words}, live}
 *   answer   {voice, said, actions: [{name, args}], why, cost: {heard, said}}
 *   live     SSE events {piece} ..., then {done: true, why, cost}
 *   error    {squawk: {status, kind, text}}
 *   key      PARROT_API_KEY, sent as `x-parrot-feather` (a name no word rule takes for a credential)
 *
 * Everything tapedeck knows of Parrot outside its wire format is here too (`provider`): the base-URL variable the
 * wrapper sets, its trace names, its model families, its default route.
 */
import type { ConversationMessage, Json, ProviderAdapter, Rewritten, SseEvent } from '../../src/index.js';

const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export const parrot: ProviderAdapter = {
  api: 'parrot.speak',
  provider: {
    name: 'parrot',
    route: { prefix: '/parrot', upstream: 'https://squawk.example' },
    baseUrlEnv: [{ name: 'PARROT_BASE_URL', path: '/v1' }],
    otelName: 'parrot.ai',
    modelFamilies: ['polly-', 'macaw'],
  },
  otelOperation: 'speak',
  otelParams: { temperature: 'temperature', max_words: 'max_tokens' },
  paramKeys: ['mood'],
  credentials: [{ env: ['PARROT_API_KEY'], header: 'x-parrot-feather' }],
  detect: ({ path, method }) => (method === 'POST' && path.endsWith('/v1/parrot/speak') ? 'parrot' : undefined),

  describeRequest: (body) => ({
    model: str(body.voice),
    streamed: body.live === true,
    params: isObj(body.settings) ? { ...body.settings } : {},
  }),

  describeBody(answer, body) {
    answer.text += str(body.said) ?? '';
    answer.model = str(body.voice);
    answer.stop = str(body.why);
    for (const a of Array.isArray(body.actions) ? body.actions : [])
      if (isObj(a)) answer.tools.push({ name: str(a.name) ?? '', args: '', parsed: a.args });
    if (isObj(body.cost)) answer.usage = usage(body.cost);
  },

  describeEvent(answer, data) {
    if (isObj(data.squawk)) {
      answer.error = str(data.squawk.kind) ?? 'squawk';
      return;
    }
    answer.text += str(data.piece) ?? '';
    if (data.done === true) {
      answer.stop = str(data.why);
      if (isObj(data.cost)) answer.usage = usage(data.cost);
    }
  },

  conversation(body) {
    const out: ConversationMessage[] = [];
    if (!isObj(body)) return out;
    if (typeof body.persona === 'string') out.push({ role: 'system', text: body.persona });
    for (const turn of Array.isArray(body.history) ? body.history : []) {
      if (isObj(turn)) out.push({ role: turn.who === 'parrot' ? 'assistant' : 'user', text: str(turn.said) ?? '' });
    }
    return out;
  },

  errorBody: (status, type, message, extra) => ({ squawk: { status, kind: type, text: message }, ...extra }),

  applyOverrides(body, path, o) {
    const applied: Rewritten['applied'] = {};
    const set = (target: Json, key: string, to: unknown): void => {
      if (target[key] !== to) applied[key] = { from: target[key], to };
      target[key] = to;
    };
    const settings = isObj(body.settings) ? body.settings : (body.settings = {});
    if (o.model !== undefined) set(body, 'voice', o.model);
    if (o.systemPrompt !== undefined) set(body, 'persona', o.systemPrompt);
    if (o.temperature !== undefined) set(settings as Json, 'temperature', o.temperature);
    if (o.maxTokens !== undefined) set(settings as Json, 'max_words', o.maxTokens);
    return { body, path, applied };
  },

  semantic(body, b) {
    const out: Json = {};
    for (const [k, v] of Object.entries(body)) {
      if (k === 'live') continue; // the shape of the answer, not the answer: converted below
      if (k === 'persona' && typeof v === 'string') out[k] = b.prose(k, v);
      else if (k === 'history' && Array.isArray(v))
        out[k] = v.map((t, i) => (isObj(t) ? { who: t.who, said: b.prose(`history[${i}].said`, str(t.said) ?? '') } : t));
      else out[k] = v;
    }
    return out;
  },

  stream: {
    usageAsked: () => true,
    toEvents(json) {
      if (typeof json.said !== 'string') return undefined;
      const pieces = json.said.split(/(?<= )/).map((piece): SseEvent => ({ offsetMs: 0, data: JSON.stringify({ piece }) }));
      return [...pieces, { offsetMs: 0, data: JSON.stringify({ done: true, why: json.why, cost: json.cost }) }];
    },
    fromEvents(data) {
      let said = '';
      let end: Json | undefined;
      for (const d of data) {
        const e: unknown = JSON.parse(d);
        if (!isObj(e)) return undefined;
        said += str(e.piece) ?? '';
        if (e.done === true) end = e;
      }
      return end === undefined ? undefined : { said, actions: [], why: end.why, cost: end.cost };
    },
  },
};

function usage(cost: Json): { inputTokens?: number; outputTokens?: number; totalTokens?: number } {
  const heard = typeof cost.heard === 'number' ? cost.heard : 0;
  const said = typeof cost.said === 'number' ? cost.said : 0;
  return { inputTokens: heard, outputTokens: said, totalTokens: heard + said };
}
