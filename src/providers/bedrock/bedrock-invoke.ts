/**
 * Bedrock's InvokeModel (`POST /model/{modelId}/invoke`, streamed as `/invoke-with-response-stream`): the body is the
 * model family's own (Anthropic's Messages API with `anthropic_version`, Amazon Nova's messages, Titan's `inputText`,
 * Llama's `prompt`), read here by its shape. A stream's `chunk` frames carry the model's own events, base64 in
 * `{"bytes": ...}`: Anthropic's are read by the Anthropic adapter, as over its own API.
 */
import { answerError } from '../answer.js';
import { anthropic } from '../anthropic.js';
import { isObj, num, str } from '../json.js';
import { topLevelOverrides } from '../overrides.js';
import type { Answer, Json, ProviderAdapter } from '../types.js';
import { parseJson } from '../../tape/json-depth.js';
import { BEDROCK, BEDROCK_CREDENTIALS, bedrockErrorBody, bedrockModel, bedrockOperation } from './bedrock.js';
import { bedrockConverse, converseUsage } from './bedrock-converse.js';

export const bedrockInvoke: ProviderAdapter = {
  api: 'invoke',
  provider: BEDROCK,
  otelOperation: 'chat',
  paramKeys: [
    'temperature',
    'top_p',
    'top_k',
    'max_tokens',
    'stop_sequences',
    'tool_choice',
    'thinking',
    'max_gen_len',
    'textGenerationConfig',
    'inferenceConfig',
  ],
  otelParams: {
    temperature: 'temperature',
    top_p: 'top_p',
    top_k: 'top_k',
    max_tokens: 'max_tokens',
    max_gen_len: 'max_tokens',
    stop_sequences: 'stop_sequences',
  },
  credentials: BEDROCK_CREDENTIALS,
  detect: ({ path, method }) => {
    const op = method === 'POST' ? bedrockOperation(path) : undefined;
    return op === 'invoke' || op === 'invoke-with-response-stream' ? 'bedrock' : undefined;
  },

  describeRequest: (body, path) => ({ model: bedrockModel(path), streamed: bedrockOperation(path) === 'invoke-with-response-stream' }),

  describeBody(answer, body) {
    if (body.type === 'message') return anthropic.describeBody(answer, body);
    // Amazon Nova: the Converse shape.
    if (isObj(body.output)) return bedrockConverse.describeBody(answer, body);
    // Titan text: `results[].outputText`.
    if (Array.isArray(body.results)) {
      for (const r of body.results) if (isObj(r)) answer.text += str(r.outputText) ?? '';
      const last = body.results[body.results.length - 1];
      if (isObj(last)) answer.stop = str(last.completionReason) ?? answer.stop;
      const input = num(body.inputTextTokenCount);
      if (input !== undefined) answer.usage = { inputTokens: input, outputTokens: num(isObj(last) ? last.tokenCount : undefined) ?? 0 };
      return;
    }
    // Llama: `generation`.
    if (typeof body.generation === 'string') llamaChunk(answer, body);
  },

  describeEvent(answer, data, ev) {
    if (ev.event !== 'chunk') return answerError(answer, { type: ev.event ?? 'error', ...data });
    const inner = chunkJson(data);
    if (inner === undefined) return;
    if (typeof inner.type === 'string') return anthropic.describeEvent(answer, inner, { offsetMs: 0, data: '', event: inner.type });
    if (isObj(inner.contentBlockDelta) && isObj(inner.contentBlockDelta.delta))
      answer.text += str(inner.contentBlockDelta.delta.text) ?? '';
    else if (isObj(inner.messageStop)) answer.stop = str(inner.messageStop.stopReason) ?? answer.stop;
    else if (isObj(inner.metadata) && isObj(inner.metadata.usage)) answer.usage = converseUsage(inner.metadata.usage);
    else if (typeof inner.outputText === 'string') {
      answer.text += inner.outputText;
      answer.stop = str(inner.completionReason) ?? answer.stop;
    } else if (typeof inner.generation === 'string') llamaChunk(answer, inner);
  },

  conversation(body) {
    if (!isObj(body)) return [];
    if (Array.isArray(body.messages)) {
      // Nova's content blocks are Converse's; Anthropic's are its own.
      const nova = body.messages.some(
        (m) => isObj(m) && Array.isArray(m.content) && m.content.some((c) => isObj(c) && c.type === undefined),
      );
      return nova && body.anthropic_version === undefined ? bedrockConverse.conversation(body) : anthropic.conversation(body);
    }
    const prompt = str(body.inputText) ?? str(body.prompt);
    return prompt === undefined ? [] : [{ role: 'user', text: prompt }];
  },

  errorBody: bedrockErrorBody,

  applyOverrides(body, path, o) {
    const { model, ...rest } = o;
    const out = topLevelOverrides(body, path, rest, { maxTokens: 'max_tokens', system: 'system' });
    if (model !== undefined) {
      const from = bedrockModel(path);
      out.path = path.replace(/^\/model\/[^/]+\//, `/model/${encodeURIComponent(model)}/`);
      if (from !== model) out.applied.model = { from, to: model };
    }
    return out;
  },

  semantic: (body, b) => anthropic.semantic?.(body, b) ?? body,
};

/** A `chunk` frame's model event: `{"bytes": base64 JSON}`. */
function chunkJson(data: Json): Json | undefined {
  if (typeof data.bytes !== 'string') return undefined;
  try {
    const inner: unknown = parseJson(Buffer.from(data.bytes, 'base64').toString('utf8'));
    return isObj(inner) ? inner : undefined;
  } catch {
    return undefined;
  }
}

function llamaChunk(answer: Answer, body: Json): void {
  answer.text += str(body.generation) ?? '';
  answer.stop = str(body.stop_reason) ?? answer.stop;
  const input = num(body.prompt_token_count);
  const output = num(body.generation_token_count);
  if (input !== undefined || output !== undefined)
    answer.usage = { inputTokens: input ?? answer.usage?.inputTokens ?? 0, outputTokens: output ?? answer.usage?.outputTokens ?? 0 };
}
