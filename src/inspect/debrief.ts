/**
 * The decision debrief: decisions, not traffic. The goal (first user message), the path of tool calls with
 * the model's own stated reason for each (a `<rationale>` block, the text it wrote before the call in the same
 * response, or its thinking), assumptions it stated, how the run ended (stop reason and a verdict), and totals.
 *
 * Rationale blocks come in the decision-tracing reference's form, `<rationale call="N">{"why": ..., "confidence":
 * 0.8, "refs": [...]}</rationale>`, attached to the Nth tool call (1-based) of that response wherever the block is
 * in its text or thinking, or bare, `<rationale>...</rationale>` (JSON or prose), attached to the call it precedes.
 * When the model gave no reason, the decision says so (`reasons: []`): nothing is ever inferred.
 */
import { conversationOf } from '../providers/describe.js';
import { adapterFor } from '../providers/registry.js';
import type { Exchange } from '../tape/schema.js';
import { formatMs, shorten, type Style } from './format.js';
import type { Step } from './steps.js';
import { parseJson } from '../tape/json-depth.js';

export type ReasonSource = 'rationale' | 'text-before-call' | 'thinking';

export interface DebriefDecision {
  /** The LLM step whose answer made the call. */
  step: number;
  tool: string;
  toolCallId?: string;
  arguments: unknown;
  /** The model's own words, most explicit first; empty when it stated no reason. */
  reasons: DebriefReason[];
  /** What the call returned, when the tape shows it (an MCP exchange, or the tool message sent back to the model). */
  result?: { step: number; value: unknown; isError?: boolean };
}

export interface DebriefReason {
  source: ReasonSource;
  text: string;
  /** From a structured rationale: the model's confidence in [0, 1], and what it refers to (`obs:1`, ...). */
  confidence?: number;
  refs?: string[];
  /** From a structured rationale: the options the model weighed and did not take, with why when it said. */
  alternatives?: { option: string; rejectedBecause?: string }[];
}

/** An assumption the model stated ("I assume X because Y"): the sentence, what it assumed, and its reason if given. */
export interface DebriefAssumption {
  step: number;
  text: string;
  assumption: string;
  because?: string;
}

/** How the run ended: `blocked` when a call was refused as a side effect, `error` when its last step failed. */
export type Verdict = 'success' | 'error' | 'blocked';

export interface Debrief {
  goal: string | null;
  decisions: DebriefDecision[];
  assumptions: DebriefAssumption[];
  ending: { step: number | null; stopReason: string | null; finalAnswer: string | null; error: string | null; verdict: Verdict };
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

const RATIONALE = /<rationale(?:\s+call\s*=\s*["']?(\d+)["']?)?\s*>([\s\S]*?)<\/rationale>/gi;
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
    for (const text of [llm.outputText, llm.thinking]) for (const a of assumptionsIn(text ?? '')) assumptions.push({ step: s.index, ...a });
    const before = textBeforeEachCall(s.exchange, llm.toolCalls.length) ?? llm.toolCalls.map(() => llm.outputText ?? '');
    // Numbered blocks anywhere in the response's text or thinking belong to the Nth call.
    const numbered = new Map<number, DebriefReason[]>();
    for (const m of [...(llm.outputText ?? '').matchAll(RATIONALE), ...(llm.thinking ?? '').matchAll(RATIONALE)]) {
      if (m[1] === undefined) continue;
      const reason = rationaleReason(m[2] ?? '');
      if (reason === undefined) continue;
      const n = Number(m[1]);
      numbered.set(n, [...(numbered.get(n) ?? []), reason]);
    }
    llm.toolCalls.forEach((call, i) => {
      const reasons: DebriefDecision['reasons'] = [...(numbered.get(i + 1) ?? [])];
      const said = before[i] ?? '';
      if (reasons.length === 0)
        for (const m of [...said.matchAll(RATIONALE), ...(llm.thinking ?? '').matchAll(RATIONALE)]) {
          if (m[1] !== undefined) continue;
          const reason = rationaleReason(m[2] ?? '');
          if (reason !== undefined) reasons.push(reason);
        }
      const plain = said.replace(RATIONALE, '').trim();
      if (plain !== '') reasons.push({ source: 'text-before-call', text: plain });
      const thought = llm.thinking?.replace(RATIONALE, '').trim();
      if (thought) reasons.push({ source: 'thinking', text: thought });
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
      verdict: verdictOf(steps),
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

/** A rationale block's content: JSON `{why, confidence?, refs?}` (the reference's form) or plain prose. */
function rationaleReason(inner: string): DebriefReason | undefined {
  const text = inner.trim();
  if (text === '') return undefined;
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch {
    return { source: 'rationale', text };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { source: 'rationale', text };
  const o = parsed as Record<string, unknown>;
  const reason: DebriefReason = { source: 'rationale', text: typeof o.why === 'string' ? o.why : text };
  if (typeof o.confidence === 'number') reason.confidence = o.confidence;
  if (Array.isArray(o.refs)) reason.refs = o.refs.filter((r): r is string => typeof r === 'string');
  if (Array.isArray(o.alternatives)) {
    const alternatives = o.alternatives.flatMap((a): NonNullable<DebriefReason['alternatives']> => {
      if (typeof a === 'string') return [{ option: a }];
      const alt = a as { option?: unknown; rejectedBecause?: unknown } | null;
      if (typeof alt?.option !== 'string') return [];
      return [{ option: alt.option, ...(typeof alt.rejectedBecause === 'string' ? { rejectedBecause: alt.rejectedBecause } : {}) }];
    });
    if (alternatives.length > 0) reason.alternatives = alternatives;
  }
  return reason;
}

/** What a rationale block says in words: its `why` when it is JSON, else its text. */
function rationaleWords(inner: string): string {
  const reason = rationaleReason(inner);
  if (reason === undefined) return '';
  return /[.!?]$/.test(reason.text) ? reason.text : `${reason.text}.`;
}

/** `blocked` when the last step was refused or any call was blocked; `error` when the last step failed; else `success`. */
function verdictOf(steps: readonly Step[]): Verdict {
  const last = steps.at(-1);
  if (last?.exchange.match?.kind === 'blocked') return 'blocked';
  if (last?.error !== undefined) return 'error';
  return steps.some((s) => s.exchange.match?.kind === 'blocked') ? 'blocked' : 'success';
}

/** The sentences of a text that state an assumption, each split into what was assumed and why (when said). */
function assumptionsIn(text: string): Omit<DebriefAssumption, 'step'>[] {
  return text
    .replace(RATIONALE, (_m, _n: string | undefined, inner: string) => ` ${rationaleWords(inner)} `)
    .split(/(?<=[.!?])\s+|\n+/)
    .map((t) => t.trim())
    .filter((t) => ASSUMPTION.test(t))
    .map(splitAssumption);
}

const ASSUMING = String.raw`(?:I(?:'m| am)? assum(?:e|ing)|assuming|my assumption is)`;

/** `I assume X because Y`, `Since Y, I assume X`, `Assuming X`: what was assumed, and the reason given. */
function splitAssumption(sentence: string): Omit<DebriefAssumption, 'step'> {
  const s = sentence.replace(/[.!?]+$/, '').trim();
  const reasonFirst = new RegExp(String.raw`^(?:since|because|as|given that)\s+(.+?),\s*${ASSUMING}\s+(?:that\s+)?(.+)$`, 'i').exec(s);
  if (reasonFirst) return { text: sentence, assumption: reasonFirst[2] as string, because: reasonFirst[1] as string };
  const rest = new RegExp(String.raw`\b${ASSUMING}\s*(?:that\s+)?(.+)$`, 'i').exec(s)?.[1] ?? s;
  const split = /^(.+?)\s*,?\s*\(?\bbecause\b\s+(.+?)\)?$/i.exec(rest);
  if (split) return { text: sentence, assumption: split[1] as string, because: split[2] as string };
  return { text: sentence, assumption: rest };
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
    for (const r of c.reasons) {
      const extra = [
        r.confidence !== undefined ? `conf ${r.confidence}` : undefined,
        r.refs && r.refs.length > 0 ? `refs: ${r.refs.join(', ')}` : undefined,
      ].filter((x) => x !== undefined);
      out.push(`     why (${r.source}): ${shorten(r.text, max * 2)}${extra.length > 0 ? ` (${extra.join('; ')})` : ''}`);
      for (const alt of r.alternatives ?? [])
        out.push(
          style.dim(
            `     instead of ${shorten(alt.option, max)}${alt.rejectedBecause ? `: rejected because ${shorten(alt.rejectedBecause, max)}` : ''}`,
          ),
        );
    }
    if (c.result) {
      const line = `     got${c.result.isError ? ' ERROR' : ''} (step ${c.result.step}): ${shorten(c.result.value, max)}`;
      out.push(c.result.isError ? style.red(line) : line);
    }
  });
  out.push('', style.bold('assumptions stated:'));
  if (d.assumptions.length === 0) out.push('  none stated');
  for (const a of d.assumptions)
    out.push(`  step ${a.step}: ${shorten(a.assumption, max)}${a.because ? ` (because ${shorten(a.because, max)})` : ''}`);
  out.push('', style.bold('ending:'));
  out.push(`  stop reason: ${d.ending.stopReason ?? 'unknown'}${d.ending.step !== null ? ` (step ${d.ending.step})` : ''}`);
  out.push(
    `  final answer: ${d.ending.finalAnswer === null ? '(none: the last LLM call did not answer in text)' : shorten(d.ending.finalAnswer, max * 2)}`,
  );
  if (d.ending.error) out.push(style.red(`  last step failed: ${d.ending.error}`));
  const t = d.totals;
  const verdict = d.ending.verdict === 'success' ? style.green('success') : style.red(d.ending.verdict);
  out.push(
    `  termination: ${d.ending.stopReason ?? 'unknown'} · verdict ${verdict} | ${t.inputTokens + t.outputTokens} tok | ${formatMs(t.durationMs)}`,
  );
  out.push(
    '',
    style.bold('totals: ') +
      `${t.steps} steps, ${t.llmCalls} LLM calls, ${t.toolCalls} tool calls, ` +
      `${t.inputTokens}→${t.outputTokens} tokens, ${formatMs(t.durationMs)}, ${t.errors} error(s)`,
  );
  return out;
}
