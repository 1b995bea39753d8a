/** Helpers for assembling an answer's meaning (text, thinking, tool calls, usage, stop reason) and a conversation. */
import type { ToolCall } from '../tape/schema.js';
import { isObj, str } from './json.js';
import type { Answer, ConversationMessage, Json, PendingTool } from './types.js';
import { parseJson } from '../tape/json-depth.js';

export function newAnswer(): Answer {
  return { text: '', thinking: '', tools: [] };
}

/** An error answer: the error's type (or status or code) and stop reason `error`. */
export function answerError(answer: Answer, body: Json): void {
  const err = isObj(body.error) ? body.error : body;
  answer.error = str(err.type) ?? str(err.status) ?? str(err.code) ?? 'error';
  answer.stop ??= 'error';
}

/** An SSE event that reports an error instead of carrying the answer. */
export function isErrorEvent(data: Json, type: string | undefined): boolean {
  return type === 'error' || isObj(data.error);
}

/** A tool call with its arguments parsed when they are JSON (no arguments: `{}`), else the raw string. */
export function finishTool(t: PendingTool): ToolCall {
  let args: unknown = t.parsed;
  if (args === undefined) {
    try {
      args = t.args === '' ? {} : parseJson(t.args);
    } catch {
      args = t.args;
    }
  }
  return t.id !== undefined ? { id: t.id, name: t.name, arguments: args } : { name: t.name, arguments: args };
}

/** Add a message to a conversation, unless it says nothing. */
export function pushMessage(out: ConversationMessage[], m: ConversationMessage): void {
  if (m.text === '' && !m.toolCalls?.length && m.toolCallId === undefined && !m.thinking) return;
  out.push(m);
}
