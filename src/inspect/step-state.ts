/**
 * The full state at one step: the conversation so far as the model saw it (the latest LLM request at or before
 * the step, plus that call's answer once it is in), the tool results so far, and the exchange itself.
 */
import { TapedeckError } from '../errors.js';
import type { Exchange } from '../tape/schema.js';
import { conversationOf } from '../providers/describe.js';
import type { ConversationMessage } from '../providers/types.js';
import { fit, formatMs, humanBytes, shorten, type Style } from './format.js';
import type { Step } from './steps.js';

export interface ToolResultSoFar {
  /** `mcp`: a tools/call exchange on this tape; `conversation`: a tool result the agent sent the model. */
  source: 'mcp' | 'conversation';
  /** Step that carried it. */
  step: number;
  name?: string;
  toolCallId?: string;
  result: unknown;
  isError?: boolean;
}

export interface StepState {
  index: number;
  total: number;
  step: Step;
  /** The LLM step whose request is the conversation shown, or null when no LLM call came at or before this step. */
  conversationFrom: number | null;
  conversation: ConversationMessage[];
  toolResults: ToolResultSoFar[];
  exchange: Exchange;
}

/** A step number as given on the command line (negative counts from the end) to a 0-based index. */
export function resolveStepIndex(n: number, total: number): number {
  if (!Number.isInteger(n)) throw new TapedeckError('BAD_ARGS', `a step is an integer, got ${n}`);
  const i = n < 0 ? total + n : n;
  if (i < 0 || i >= total)
    throw new TapedeckError(
      'BAD_ARGS',
      `step ${n} is out of range: the tape has ${total} step(s) (0..${total - 1}, or -1..-${total} from the end)`,
    );
  return i;
}

export function failingSteps(steps: readonly Step[]): Step[] {
  return steps.filter((s) => s.error !== undefined);
}

export function stepState(steps: readonly Step[], n: number): StepState {
  const index = resolveStepIndex(n, steps.length);
  const step = steps[index] as Step;
  let llm: Step | undefined;
  for (let i = index; i >= 0 && llm === undefined; i--) if (steps[i]?.kind === 'LLM') llm = steps[i];
  const conversation = llm ? conversationOf(llm.exchange) : [];
  if (llm?.answer) {
    const m = llm.answer;
    const answer: ConversationMessage = { role: 'assistant', text: m.outputText ?? '' };
    if (m.toolCalls.length > 0) answer.toolCalls = m.toolCalls;
    if (m.thinking) answer.thinking = m.thinking;
    if (answer.text !== '' || answer.toolCalls || answer.thinking) conversation.push(answer);
  }
  const toolResults: ToolResultSoFar[] = [];
  const names = new Map<string, string>();
  for (const msg of conversation) {
    for (const c of msg.toolCalls ?? []) if (c.id) names.set(c.id, c.name);
    if (msg.role === 'tool') {
      const r: ToolResultSoFar = { source: 'conversation', step: llm?.index ?? index, result: msg.text };
      if (msg.toolCallId) {
        r.toolCallId = msg.toolCallId;
        const name = names.get(msg.toolCallId);
        if (name) r.name = name;
      }
      toolResults.push(r);
    }
  }
  for (const s of steps.slice(0, index + 1)) {
    const mcp = s.exchange.mcp;
    if (mcp?.method !== 'tools/call') continue;
    const r: ToolResultSoFar = { source: 'mcp', step: s.index, result: mcp.error ?? mcp.result };
    if (mcp.toolName) r.name = mcp.toolName;
    if (mcp.isError !== undefined) r.isError = mcp.isError;
    toolResults.push(r);
  }
  return { index, total: steps.length, step, conversationFrom: llm?.index ?? null, conversation, toolResults, exchange: step.exchange };
}

/** Replace strings longer than `max` with a shortened form that shows their size (for printing huge bodies). */
export function clipStrings(value: unknown, max: number): unknown {
  if (typeof value === 'string')
    return value.length > max ? `${value.slice(0, max)}... (${humanBytes(Buffer.byteLength(value, 'utf8'))})` : value;
  if (Array.isArray(value)) return value.map((v) => clipStrings(v, max));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clipStrings(v, max)]));
  return value;
}

export function renderStepState(state: StepState, width: number, style: Style): string[] {
  const s = state.step;
  const out: string[] = [];
  out.push(
    style.bold(
      `step ${state.index} of ${state.total} (0-based) · ${s.kind} ${s.route} ${s.target} · +${formatMs(s.offsetMs)} · ` +
        `${formatMs(s.durationMs)} · status ${s.status ?? '---'}${s.match ? ` · ${s.match}` : ''}`,
    ),
  );
  if (s.error) out.push(style.red(`! ${s.error}`));
  out.push(
    '',
    style.bold(
      state.conversationFrom === null
        ? 'conversation: no LLM call at or before this step'
        : `conversation as the model saw it (request of step ${state.conversationFrom}, then its answer):`,
    ),
  );
  const textMax = Math.max(60, width * 4);
  for (const m of state.conversation) {
    const head = `  [${m.role}${m.toolCallId ? ` ${m.toolCallId}` : ''}] `;
    if (m.thinking) out.push(style.dim(`${head}(thinking) ${shorten(m.thinking, textMax)}`));
    if (m.text !== '') out.push(`${head}${shorten(m.text, textMax)}`);
    for (const c of m.toolCalls ?? [])
      out.push(style.cyan(`${head}→ ${c.name}(${shorten(c.arguments, textMax)})${c.id ? ` id=${c.id}` : ''}`));
  }
  out.push('', style.bold(`tool results so far (${state.toolResults.length}):`));
  if (state.toolResults.length === 0) out.push('  none');
  for (const r of state.toolResults) {
    const line = `  step ${r.step} ${r.source} ${r.name ?? '?'}${r.toolCallId ? ` (${r.toolCallId})` : ''}${r.isError ? ' ERROR' : ''}: ${shorten(r.result, textMax)}`;
    out.push(r.isError ? style.red(line) : line);
  }
  out.push('', style.bold('exchange:'));
  const json = JSON.stringify(clipStrings(state.exchange, Math.max(200, width * 20)), null, 2);
  for (const line of json.split('\n')) out.push(line.length > width * 40 ? fit(line, width * 40) : line);
  return out;
}
