/**
 * Which step of one run goes with which step of the other, for the diff: the LLM calls both runs made with the same
 * request (the same model, the same conversation) pair up, in order (a longest common subsequence); between two such
 * pairs the remaining steps pair by kind, in order (an LLM call with an LLM call, an MCP request with one of the same
 * method), then by position, and those left over were made by one run only: `removed` (only the original made it)
 * or `added` (only the replay). So an LLM call a run skipped is named as removed rather than shifting every later
 * pair by one. Tool calls are compared as a sequence of their own (`tool-sequence.ts`: removed, added, reordered), so
 * an MCP request pairs by its method only: a model that plans other tools moves them.
 */
import stringify from 'fast-json-stable-stringify';
import { conversationOf } from '../../providers/describe.js';
import type { Step } from '../steps.js';
import { argsHash } from './tool-sequence.js';

/** One pair: a step of each run, or of one run only (`a` the original, `b` the replay). */
export interface StepPair {
  a?: Step | undefined;
  b?: Step | undefined;
}

/** Past this many cells (middle of A × middle of B), the middle pairs by position: the LCS table would be too large. */
const MAX_CELLS = 4_000_000;

/** What an LLM call asked, without per-run noise (tool call ids, timing); undefined for other steps, and unread requests. */
export function requestKey(step: Step): string | undefined {
  const ex = step.exchange;
  if (ex.llm === undefined) return undefined;
  const conversation = conversationOf(ex);
  // A request whose conversation cannot be read says nothing to pair it by.
  if (conversation.length === 0) return undefined;
  const messages = conversation.map((m) => ({
    role: m.role,
    text: m.text,
    calls: (m.toolCalls ?? []).map((c) => [c.name, argsHash(c.arguments)]),
  }));
  return `${ex.llm.model ?? ex.llm.api}\u0000${stringify(messages)}`;
}

/** The steps of `a` and `b` paired, in order (see the file's comment). */
export function alignSteps(a: readonly Step[], b: readonly Step[]): StepPair[] {
  // By request (LLM calls); between those, by kind (an LLM call with an LLM call, an MCP method with the same method).
  return alignBy(a, b, requestKey, (ga, gb) => alignBy(ga, gb, kindKey, byPosition));
}

/** An LLM call, or an MCP request by its method, or another HTTP call: what pairs when nothing better does. */
function kindKey(step: Step): string {
  const ex = step.exchange;
  return ex.llm ? 'LLM' : ex.mcp ? `MCP ${ex.mcp.method}` : 'HTTP';
}

/** Pair by position; the longer run's extra steps belong to it only. */
function byPosition(a: readonly Step[], b: readonly Step[]): StepPair[] {
  return Array.from({ length: Math.max(a.length, b.length) }, (_, k) => ({ a: a[k], b: b[k] }));
}

/**
 * The steps with equal keys paired in order (a longest common subsequence; a step without a key pairs by key with
 * nothing), and the steps between two such pairs paired by `between`.
 */
function alignBy(
  a: readonly Step[],
  b: readonly Step[],
  key: (s: Step) => string | undefined,
  between: (a: readonly Step[], b: readonly Step[]) => StepPair[],
): StepPair[] {
  const ka = a.map((s, i) => key(s) ?? `\u0001a${i}`);
  const kb = b.map((s, i) => key(s) ?? `\u0001b${i}`);
  // The same start and end pair as they are; only the middle needs the table.
  let start = 0;
  while (start < ka.length && start < kb.length && ka[start] === kb[start]) start++;
  let endA = ka.length;
  let endB = kb.length;
  while (endA > start && endB > start && ka[endA - 1] === kb[endB - 1]) {
    endA--;
    endB--;
  }
  const pairs: StepPair[] = [];
  for (let k = 0; k < start; k++) pairs.push({ a: a[k], b: b[k] });
  let i = start;
  let j = start;
  const common = matchMiddle(ka.slice(start, endA), kb.slice(start, endB));
  for (const [mi, mj] of [...common.map(([x, y]) => [x + start, y + start] as const), [endA, endB] as const]) {
    for (const p of between(a.slice(i, mi), b.slice(j, mj))) pairs.push(p);
    [i, j] = [mi, mj];
    if (mi < endA && mj < endB) pairs.push({ a: a[i++], b: b[j++] });
  }
  for (let k = 0; endA + k < a.length; k++) pairs.push({ a: a[endA + k], b: b[endB + k] });
  return pairs;
}

/** The index pairs of a longest common subsequence of two key lists (none when the table would be too large). */
function matchMiddle(ka: readonly string[], kb: readonly string[]): [number, number][] {
  const n = ka.length;
  const m = kb.length;
  if (n === 0 || m === 0 || n * m > MAX_CELLS) return [];
  // lcs[i][j]: LCS length of ka[i..] and kb[j..]
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i] as Uint32Array;
    const next = lcs[i + 1] as Uint32Array;
    for (let j = m - 1; j >= 0; j--)
      row[j] = ka[i] === kb[j] ? (next[j + 1] as number) + 1 : Math.max(next[j] as number, row[j + 1] as number);
  }
  const out: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (ka[i] === kb[j]) out.push([i++, j++]);
    else if ((lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0)) i++;
    else j++;
  }
  return out;
}

/** The pairs of LLM calls: a pair of an LLM call with another kind of step is two calls made by one run each. */
export function llmPairs(pairs: readonly StepPair[]): StepPair[] {
  const out: StepPair[] = [];
  for (const { a, b } of pairs) {
    const la = a?.kind === 'LLM' ? a : undefined;
    const lb = b?.kind === 'LLM' ? b : undefined;
    if (la !== undefined && lb !== undefined) out.push({ a: la, b: lb });
    else if (la !== undefined) out.push({ a: la });
    else if (lb !== undefined) out.push({ b: lb });
  }
  return out;
}
