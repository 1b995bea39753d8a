/**
 * The conversation as the model saw it, read from an LLM request body in any provider shape:
 * OpenAI chat `messages`, Anthropic `system` + `messages`, Gemini `systemInstruction` + `contents`,
 * OpenAI Responses `instructions` + `input`. One flat message list, in order.
 */
import { contentText, isObj } from './steps.js';

export interface ConversationMessage {
  role: string;
  text: string;
  /** Tool calls an assistant turn made. */
  toolCalls?: { id?: string; name: string; arguments: unknown }[];
  /** For a tool result: the call it answers. */
  toolCallId?: string;
  /** Thinking / reasoning the assistant turn carried. */
  thinking?: string;
}

export function conversationOf(body: unknown): ConversationMessage[] {
  if (!isObj(body)) return [];
  const out: ConversationMessage[] = [];
  if (body.system !== undefined) push(out, { role: 'system', text: contentText(body.system) });
  if (typeof body.instructions === 'string') push(out, { role: 'system', text: body.instructions });
  if (isObj(body.systemInstruction)) push(out, { role: 'system', text: partsText(body.systemInstruction.parts) });
  if (Array.isArray(body.messages)) for (const m of body.messages) messageOf(m, out);
  if (Array.isArray(body.contents)) for (const c of body.contents) geminiOf(c, out);
  if (typeof body.input === 'string') push(out, { role: 'user', text: body.input });
  else if (Array.isArray(body.input)) for (const item of body.input) responsesItemOf(item, out);
  return out;
}

function push(out: ConversationMessage[], m: ConversationMessage): void {
  if (m.text === '' && !m.toolCalls?.length && m.toolCallId === undefined && !m.thinking) return;
  out.push(m);
}

function parseArgs(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

/** OpenAI chat message, or Anthropic message (content blocks: text, thinking, tool_use, tool_result). */
function messageOf(m: unknown, out: ConversationMessage[]): void {
  if (!isObj(m)) return;
  const role = typeof m.role === 'string' ? m.role : 'unknown';
  if (role === 'tool') {
    push(out, { role: 'tool', text: contentText(m.content), toolCallId: typeof m.tool_call_id === 'string' ? m.tool_call_id : undefined });
    return;
  }
  const msg: ConversationMessage = { role, text: '' };
  const texts: string[] = [];
  const thinking: string[] = [];
  const calls: NonNullable<ConversationMessage['toolCalls']> = [];
  if (typeof m.content === 'string') texts.push(m.content);
  else if (Array.isArray(m.content)) {
    for (const b of m.content) {
      if (!isObj(b)) continue;
      if (typeof b.text === 'string' && (b.type === 'text' || b.type === undefined)) texts.push(b.text);
      else if (b.type === 'thinking' && typeof b.thinking === 'string') thinking.push(b.thinking);
      else if (b.type === 'tool_use' && typeof b.name === 'string') calls.push({ id: str(b.id), name: b.name, arguments: b.input });
      else if (b.type === 'tool_result') push(out, { role: 'tool', text: contentText(b.content), toolCallId: str(b.tool_use_id) });
    }
  }
  if (Array.isArray(m.tool_calls)) {
    for (const c of m.tool_calls) {
      if (isObj(c) && isObj(c.function) && typeof c.function.name === 'string')
        calls.push({ id: str(c.id), name: c.function.name, arguments: parseArgs(c.function.arguments) });
    }
  }
  msg.text = texts.join('\n');
  if (calls.length > 0) msg.toolCalls = calls;
  if (thinking.length > 0) msg.thinking = thinking.join('\n');
  push(out, msg);
}

function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  return parts
    .filter((p): p is { text: string } => isObj(p) && typeof p.text === 'string' && p.thought !== true)
    .map((p) => p.text)
    .join('\n');
}

function geminiOf(c: unknown, out: ConversationMessage[]): void {
  if (!isObj(c)) return;
  const role = c.role === 'model' ? 'assistant' : typeof c.role === 'string' ? c.role : 'user';
  const parts = Array.isArray(c.parts) ? c.parts : [];
  const calls: NonNullable<ConversationMessage['toolCalls']> = [];
  const thinking: string[] = [];
  for (const p of parts) {
    if (!isObj(p)) continue;
    if (isObj(p.functionCall) && typeof p.functionCall.name === 'string')
      calls.push({ id: str(p.functionCall.id), name: p.functionCall.name, arguments: p.functionCall.args });
    if (isObj(p.functionResponse))
      push(out, {
        role: 'tool',
        text: JSON.stringify(p.functionResponse.response ?? null),
        toolCallId: str(p.functionResponse.id) ?? str(p.functionResponse.name),
      });
    if (p.thought === true && typeof p.text === 'string') thinking.push(p.text);
  }
  const msg: ConversationMessage = { role, text: partsText(parts) };
  if (calls.length > 0) msg.toolCalls = calls;
  if (thinking.length > 0) msg.thinking = thinking.join('\n');
  push(out, msg);
}

function responsesItemOf(item: unknown, out: ConversationMessage[]): void {
  if (!isObj(item)) return;
  if (item.type === 'function_call' && typeof item.name === 'string') {
    push(out, {
      role: 'assistant',
      text: '',
      toolCalls: [{ id: str(item.call_id), name: item.name, arguments: parseArgs(item.arguments) }],
    });
  } else if (item.type === 'function_call_output') {
    push(out, {
      role: 'tool',
      text: typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? null),
      toolCallId: str(item.call_id),
    });
  } else if (item.type === 'reasoning') {
    const summary = Array.isArray(item.summary)
      ? item.summary.map((s) => (isObj(s) && typeof s.text === 'string' ? s.text : '')).join('\n')
      : '';
    push(out, { role: 'assistant', text: '', thinking: summary });
  } else if (typeof item.role === 'string') {
    push(out, { role: item.role, text: contentText(item.content) });
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
