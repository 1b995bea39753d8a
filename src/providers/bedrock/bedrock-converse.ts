/**
 * Bedrock's Converse API (`POST /model/{modelId}/converse`, streamed as `/converse-stream`): one message shape for
 * every model. `system` (text blocks) and `messages` of content blocks (`text`, `toolUse`, `toolResult`,
 * `reasoningContent`) in, `inferenceConfig` for the parameters; `output.message.content`, `stopReason` and `usage` out.
 * A stream's frames are named by their `:event-type`: `messageStart`, `contentBlockStart` (a tool's id and name),
 * `contentBlockDelta` (text, tool input JSON in pieces, reasoning), `contentBlockStop`, `messageStop` (the stop
 * reason), `metadata` (usage); an exception frame (`throttlingException`, `modelStreamErrorException`...) ends it.
 */
import type { Usage } from '../../tape/schema.js';
import { answerError, pushMessage } from '../answer.js';
import { isObj, num, str } from '../json.js';
import { objectAt, setTracked } from '../overrides.js';
import { listView, objectView } from '../semantic.js';
import type { Answer, ConversationMessage, Json, ProviderAdapter, Rewritten, SemanticBuilder } from '../types.js';
import { BEDROCK, BEDROCK_CREDENTIALS, bedrockErrorBody, bedrockModel, bedrockOperation } from './bedrock.js';

export const bedrockConverse: ProviderAdapter = {
  api: 'converse',
  provider: BEDROCK,
  otelOperation: 'chat',
  paramKeys: ['toolConfig', 'guardrailConfig', 'additionalModelRequestFields', 'promptVariables', 'performanceConfig'],
  otelParams: { maxTokens: 'max_tokens', temperature: 'temperature', topP: 'top_p', stopSequences: 'stop_sequences' },
  credentials: BEDROCK_CREDENTIALS,
  detect: ({ path, method }) => {
    const op = method === 'POST' ? bedrockOperation(path) : undefined;
    return op === 'converse' || op === 'converse-stream' ? 'bedrock' : undefined;
  },

  describeRequest(body, path) {
    const params: Json = {};
    if (isObj(body.inferenceConfig)) for (const [k, v] of Object.entries(body.inferenceConfig)) params[k] = v;
    return { model: bedrockModel(path), streamed: bedrockOperation(path) === 'converse-stream', params };
  },

  describeBody(answer, body) {
    const msg = isObj(body.output) && isObj(body.output.message) ? body.output.message : undefined;
    if (msg && Array.isArray(msg.content)) for (const block of msg.content) if (isObj(block)) contentBlock(answer, block);
    answer.stop = str(body.stopReason) ?? answer.stop;
    if (isObj(body.usage)) answer.usage = converseUsage(body.usage);
  },

  describeEvent(answer, data, ev) {
    const type = ev.event;
    if (type === undefined || /Exception$/.test(type)) return answerError(answer, { type: type ?? 'error', ...data });
    const index = num(data.contentBlockIndex) ?? 0;
    if (type === 'contentBlockStart' && isObj(data.start) && isObj(data.start.toolUse)) {
      const t = data.start.toolUse;
      answer.tools[index] = { id: str(t.toolUseId), name: str(t.name) ?? '', args: '' };
    } else if (type === 'contentBlockDelta' && isObj(data.delta)) {
      const d = data.delta;
      if (typeof d.text === 'string') answer.text += d.text;
      if (isObj(d.toolUse)) {
        const t = answer.tools[index];
        if (t) t.args += str(d.toolUse.input) ?? '';
      }
      if (isObj(d.reasoningContent)) answer.thinking += str(d.reasoningContent.text) ?? '';
    } else if (type === 'messageStop') answer.stop = str(data.stopReason) ?? answer.stop;
    else if (type === 'metadata' && isObj(data.usage)) answer.usage = converseUsage(data.usage);
  },

  conversation(body) {
    const out: ConversationMessage[] = [];
    if (!isObj(body)) return out;
    if (Array.isArray(body.system)) pushMessage(out, { role: 'system', text: blocksText(body.system) });
    if (Array.isArray(body.messages)) for (const m of body.messages) message(m, out);
    return out;
  },

  errorBody: bedrockErrorBody,

  applyOverrides(body, path, o) {
    const applied: Rewritten['applied'] = {};
    let outPath = path;
    if (o.model !== undefined) {
      const from = bedrockModel(path);
      outPath = path.replace(/^\/model\/[^/]+\//, `/model/${encodeURIComponent(o.model)}/`);
      if (from !== o.model) applied.model = { from, to: o.model };
    }
    if (o.temperature !== undefined) setTracked(applied, objectAt(body, 'inferenceConfig'), 'temperature', 'temperature', o.temperature);
    if (o.maxTokens !== undefined) setTracked(applied, objectAt(body, 'inferenceConfig'), 'maxTokens', 'maxTokens', o.maxTokens);
    if (o.systemPrompt !== undefined) {
      applied.system = { from: body.system, to: o.systemPrompt };
      body.system = [{ text: o.systemPrompt }];
    }
    return { body, path: outPath, applied };
  },

  semantic(body, b) {
    const out: Json = {};
    for (const [k, v] of Object.entries(body)) {
      if (k === 'system') out[k] = blocksView(k, v, b);
      else if (k === 'messages') out[k] = listView(v, k, (m, p) => objectView(m, p, { content: (x, xp) => blocksView(xp, x, b) }));
      else out[k] = v;
    }
    return out;
  },
};

/** Converse usage: `inputTokens` excludes cache reads and writes, which are counted apart. */
export function converseUsage(u: Json): Usage {
  const out: Usage = {};
  const input = num(u.inputTokens);
  const cacheRead = num(u.cacheReadInputTokens) ?? 0;
  const cacheWrite = num(u.cacheWriteInputTokens) ?? 0;
  if (input !== undefined) out.inputTokens = input + cacheRead + cacheWrite;
  const output = num(u.outputTokens);
  if (output !== undefined) out.outputTokens = output;
  if (cacheRead > 0) out.cachedInputTokens = cacheRead;
  const total = num(u.totalTokens);
  if (total !== undefined) out.totalTokens = total;
  else if (out.inputTokens !== undefined && output !== undefined) out.totalTokens = out.inputTokens + output;
  return out;
}

/** One content block of an answer. */
function contentBlock(answer: Answer, block: Json): void {
  if (typeof block.text === 'string') answer.text += block.text;
  if (isObj(block.toolUse))
    answer.tools.push({
      id: str(block.toolUse.toolUseId),
      name: str(block.toolUse.name) ?? '',
      args: '',
      parsed: block.toolUse.input ?? {},
    });
  if (isObj(block.reasoningContent) && isObj(block.reasoningContent.reasoningText))
    answer.thinking += str(block.reasoningContent.reasoningText.text) ?? '';
}

function blocksText(blocks: unknown[]): string {
  return blocks
    .filter((b): b is { text: string } => isObj(b) && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

/** A message: its text, the tools it called, and tool results (each a `tool` message). */
function message(m: unknown, out: ConversationMessage[]): void {
  if (!isObj(m) || !Array.isArray(m.content)) return;
  const calls: NonNullable<ConversationMessage['toolCalls']> = [];
  const thinking: string[] = [];
  for (const c of m.content) {
    if (!isObj(c)) continue;
    if (isObj(c.toolUse) && typeof c.toolUse.name === 'string')
      calls.push({ id: str(c.toolUse.toolUseId), name: c.toolUse.name, arguments: c.toolUse.input });
    if (isObj(c.toolResult)) {
      const content = Array.isArray(c.toolResult.content) ? c.toolResult.content : [];
      const text = content.map((x) => (isObj(x) ? (typeof x.text === 'string' ? x.text : JSON.stringify(x.json ?? x)) : '')).join('\n');
      pushMessage(out, { role: 'tool', text, toolCallId: str(c.toolResult.toolUseId) });
    }
    if (isObj(c.reasoningContent) && isObj(c.reasoningContent.reasoningText))
      thinking.push(str(c.reasoningContent.reasoningText.text) ?? '');
  }
  const msg: ConversationMessage = { role: str(m.role) ?? 'unknown', text: blocksText(m.content) };
  if (calls.length > 0) msg.toolCalls = calls;
  if (thinking.length > 0) msg.thinking = thinking.join('\n');
  pushMessage(out, msg);
}

/** Content blocks as the semantic view sees them: text as prose, tool input by key, tool results as results. */
function blocksView(path: string, v: unknown, b: SemanticBuilder): unknown {
  return listView(v, path, (block, p) =>
    objectView(block, p, {
      text: (x) => (typeof x === 'string' ? b.prose(p, x) : x),
      // A tool use's id is made per run: left out, as the other APIs' call ids are.
      toolUse: (x) => (isObj(x) ? { ...withoutId(x), input: b.args(`${p}.toolUse.input`, x.input) } : x),
      toolResult: (x) => (isObj(x) ? { ...withoutId(x), content: b.result(`${p}.toolResult.content`, x.content) } : x),
    }),
  );
}

function withoutId(x: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(x)) if (k !== 'toolUseId') out[k] = v;
  return out;
}
