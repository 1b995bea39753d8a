/**
 * The decision debrief: decisions, not traffic. The goal (first user message), the path of tool calls with
 * the model's own stated reason for each (a `<rationale>` block, the text it wrote before the call in the same
 * response, or its thinking), assumptions it stated, how the run ended, and totals.
 * When the model gave no reason, the decision says so (`reasons: []`): nothing is ever inferred.
 */
import { conversationOf } from '../providers/describe.js';
import { adapterFor } from '../providers/registry.js';
import type { Exchange } from '../tape/schema.js';
import { formatMs, shorten, type Style } from './format.js';
import type { Step } from './steps.js';

export type ReasonSource = 'rationale' | 'text-before-call' | 'thinking';

export interface DebriefDecision {
  /** The LLM step whose answer made the call. */
  step: number;
  tool: string;
  toolCallId?: string;
  arguments: unknown;
  /** The model's own words, most explicit first; empty when it stated no reason. */
  reasons: { source: ReasonSource; text: string }[];
  /** What the call returned, when the tape shows it (an MCP exchange, or the tool message sent back to the model). */
  result?: { step: number; value: unknown; isError?: boolean };
}

export interface Debrief {
  goal: string | null;
  decisions: DebriefDecision[];
  assumptions: { step: number; text: string }[];
  ending: { step: number | null; stopReason: string | null; finalAnswer: string | null; error: string | null };
  totals: {
    steps: number;
    llmCalls: number;
    toolCalls: number;
    inputTokens: number;
    outputTokens: number;
    durationMs: number;
    errors: number;
  };
}

const RATIONALE = /<rationale>([\s\S]*?)<\/rationale>/gi;
const ASSUMPTION = /\b(I(?:'m| am)? assum(?:e|ing)|assuming|my assumption)\b/i;

export function debrief(steps: readonly Step[]): Debrief {
  const llmSteps = steps.filter((s) => s.exchange.llm !== undefined);
  const first = llmSteps[0];
  const goal = first ? (conversationOf(first.exchange).find((m) => m.role === 'user')?.text ?? null) : null;
  const decisions: DebriefDecision[] = [];
  const assumptions: Debrief['assumptions'] = [];
  const usedMcp = new Set<number>();
  for (const s of llmSteps) {
    const llm = s.exchange.llm;
    if (!llm) continue;
    for (const text of [llm.outputText, llm.thinking])
      for (const a of assumptionsIn(text ?? '')) assumptions.push({ step: s.index, text: a });
    const before = textBeforeEachCall(s.exchange, llm.toolCalls.length) ?? llm.toolCalls.map(() => llm.outputText ?? '');
    llm.toolCalls.forEach((call, i) => {
      const reasons: DebriefDecision['reasons'] = [];
      const said = before[i] ?? '';
      const rationale = [...said.matchAll(RATIONALE), ...(llm.thinking ?? '').matchAll(RATIONALE)]
        .map((m) => (m[1] ?? '').trim())
        .filter((t) => t !== '');
      if (rationale.length > 0) reasons.push({ source: 'rationale', text: rationale.join('\n') });
      const plain = said.replace(RATIONALE, '').trim();
      if (plain !== '') reasons.push({ source: 'text-before-call', text: plain });
      if (llm.thinking?.trim()) reasons.push({ source: 'thinking', text: llm.thinking.trim() });
      const d: DebriefDecision = { step: s.index, tool: call.name, arguments: call.arguments, reasons };
      if (call.id) d.toolCallId = call.id;
      const result = findResult(steps, s.index, call.name, call.id, usedMcp);
      if (result) d.result = result;
      decisions.push(d);
    });
  }
  const last = llmSteps.at(-1);
  const lastStep = steps.at(-1);
  let inputTokens = 0;
  let outputTokens = 0;
  for (const s of llmSteps) {
    inputTokens += s.tokens?.input ?? 0;
    outputTokens += s.tokens?.output ?? 0;
  }
  const start = steps[0]?.offsetMs ?? 0;
  const end = steps.reduce((m, s) => Math.max(m, s.offsetMs + s.durationMs), start);
  const mcpToolCalls = steps.filter((s) => s.exchange.mcp?.method === 'tools/call').length;
  return {
    goal,
    decisions,
    assumptions,
    ending: {
      step: last?.index ?? null,
      stopReason: last?.exchange.llm?.stopReason ?? null,
      finalAnswer: last && last.exchange.llm?.toolCalls.length === 0 ? (last.exchange.llm.outputText ?? null) : null,
      error: lastStep?.error ?? null,
    },
    totals: {
      steps: steps.length,
      llmCalls: llmSteps.length,
      toolCalls: Math.max(decisions.length, mcpToolCalls),
      inputTokens,
      outputTokens,
      durationMs: end - start,
      errors: steps.filter((s) => s.error !== undefined).length,
    },
  };
}

function assumptionsIn(text: string): string[] {
  return text
    .replace(RATIONALE, (_m, inner: string) => inner)
    .split(/(?<=[.!?])\s+|\n+/)
    .map((t) => t.trim())
    .filter((t) => ASSUMPTION.test(t));
}

/**
 * The text the model wrote before each tool call, in block order, when the API keeps the order (its adapter says:
 * Anthropic content blocks, plain or streamed). Undefined when it does not (then every call of the response gets
 * the response's whole text).
 */
function textBeforeEachCall(ex: Exchange, calls: number): string[] | undefined {
  if (ex.response === undefined) return undefined;
  const before = adapterFor(ex.llm?.api)?.textBeforeCalls?.(ex.response);
  return before?.length === calls ? before : undefined;
}

/** The result of a call: the first unused MCP tools/call of that tool after the step, else the tool message with its id. */
function findResult(
  steps: readonly Step[],
  from: number,
  name: string,
  id: string | undefined,
  used: Set<number>,
): DebriefDecision['result'] {
  for (const s of steps.slice(from + 1)) {
    const mcp = s.exchange.mcp;
    if (mcp?.method === 'tools/call' && mcp.toolName === name && !used.has(s.index)) {
      used.add(s.index);
      const r: NonNullable<DebriefDecision['result']> = { step: s.index, value: mcp.error ?? mcp.result };
      if (mcp.isError !== undefined) r.isError = mcp.isError;
      return r;
    }
  }
  if (id === undefined) return undefined;
  for (const s of steps.slice(from + 1)) {
    if (!s.exchange.llm) continue;
    const msg = conversationOf(s.exchange).find((m) => m.role === 'tool' && m.toolCallId === id);
    if (msg) return { step: s.index, value: msg.text };
  }
  return undefined;
}

export function renderDebrief(d: Debrief, width: number, style: Style): string[] {
  const max = Math.max(40, width - 12);
  const out: string[] = [style.bold('goal: ') + (d.goal === null ? '(no user message on this tape)' : shorten(d.goal, max * 2)), ''];
  out.push(style.bold(`path (${d.decisions.length} tool call${d.decisions.length === 1 ? '' : 's'}):`));
  if (d.decisions.length === 0) out.push('  the model called no tools');
  d.decisions.forEach((c, i) => {
    out.push(
      style.cyan(`  ${i + 1}. ${c.tool}(${shorten(c.arguments, max - c.tool.length)})`) +
        style.dim(`  step ${c.step}${c.toolCallId ? ` ${c.toolCallId}` : ''}`),
    );
    if (c.reasons.length === 0) out.push(style.yellow('     why: the model stated no reason'));
    for (const r of c.reasons) out.push(`     why (${r.source}): ${shorten(r.text, max * 2)}`);
    if (c.result) {
      const line = `     got${c.result.isError ? ' ERROR' : ''} (step ${c.result.step}): ${shorten(c.result.value, max)}`;
      out.push(c.result.isError ? style.red(line) : line);
    }
  });
  out.push('', style.bold('assumptions stated:'));
  if (d.assumptions.length === 0) out.push('  none stated');
  for (const a of d.assumptions) out.push(`  step ${a.step}: ${shorten(a.text, max)}`);
  out.push('', style.bold('ending:'));
  out.push(`  stop reason: ${d.ending.stopReason ?? 'unknown'}${d.ending.step !== null ? ` (step ${d.ending.step})` : ''}`);
  out.push(
    `  final answer: ${d.ending.finalAnswer === null ? '(none: the last LLM call did not answer in text)' : shorten(d.ending.finalAnswer, max * 2)}`,
  );
  if (d.ending.error) out.push(style.red(`  last step failed: ${d.ending.error}`));
  const t = d.totals;
  out.push(
    '',
    style.bold('totals: ') +
      `${t.steps} steps, ${t.llmCalls} LLM calls, ${t.toolCalls} tool calls, ` +
      `${t.inputTokens}→${t.outputTokens} tokens, ${formatMs(t.durationMs)}, ${t.errors} error(s)`,
  );
  return out;
}
