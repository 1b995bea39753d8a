/**
 * A run's tool sequence (every tool call in order: the calls the model asked for and the MCP `tools/call`
 * requests, linked where one executed the other) and the minimal edit script between two sequences.
 */
import { createHash } from 'node:crypto';
import stringify from 'fast-json-stable-stringify';
import type { Exchange } from '../../tape/schema.js';
import { parseJson } from '../../tape/json-depth.js';

export interface ToolCallEntry {
  toolName: string;
  /** First 16 hex characters of SHA-256 over the arguments as stable JSON. */
  argsHash: string;
  arguments: unknown;
  /** `model`: the model asked for it; `mcp`: an MCP `tools/call` with no model request before it; `model+mcp`: both, linked. */
  source: 'model' | 'mcp' | 'model+mcp';
  /** The LLM exchange whose answer asked for the call. */
  llmExchangeId?: string;
  /** The MCP exchange that executed it. */
  mcpExchangeId?: string;
}

export type ToolEdit =
  /** In the replay, not in the original; `atIndex` is its position in the replay's sequence. */
  | { kind: 'added'; toolName: string; argsHash: string; atIndex: number }
  /** In the original, not in the replay; `atIndex` is its position in the original's sequence. */
  | { kind: 'removed'; toolName: string; argsHash: string; atIndex: number }
  /** In both, at another place: `from` in the original's sequence, `to` in the replay's. */
  | { kind: 'reordered'; toolName: string; argsHash: string; from: number; to: number };

/** Arguments as compared: OpenAI's JSON-string arguments parsed, no arguments as `{}`. */
export function normalizeArgs(args: unknown): unknown {
  if (args === undefined || args === null) return {};
  if (typeof args !== 'string') return args;
  if (args.trim() === '') return {};
  try {
    return parseJson(args) as unknown;
  } catch {
    return args;
  }
}

/** First 16 hex characters of SHA-256 over the (normalised) arguments as stable JSON. */
export function argsHash(args: unknown): string {
  return createHash('sha256')
    .update(stringify(normalizeArgs(args)))
    .digest('hex')
    .slice(0, 16);
}

/**
 * Every tool call of a run, from its exchanges in timeline order. An MCP `tools/call` with the same name and
 * arguments as a call the model asked for earlier (and that no MCP call executed yet) is that call, not another.
 */
export function toolSequence(ordered: readonly Exchange[]): ToolCallEntry[] {
  const out: ToolCallEntry[] = [];
  const unexecuted: ToolCallEntry[] = [];
  for (const ex of ordered) {
    if (ex.llm) {
      for (const call of ex.llm.toolCalls) {
        const args = normalizeArgs(call.arguments);
        const entry: ToolCallEntry = {
          toolName: call.name,
          argsHash: argsHash(args),
          arguments: args,
          source: 'model',
          llmExchangeId: ex.id,
        };
        out.push(entry);
        unexecuted.push(entry);
      }
    } else if (ex.mcp?.method === 'tools/call' && ex.mcp.direction === 'client-to-server') {
      const name = ex.mcp.toolName ?? '';
      const args = normalizeArgs(ex.mcp.arguments);
      const hash = argsHash(args);
      const asked = unexecuted.findIndex((e) => e.toolName === name && e.argsHash === hash);
      if (asked !== -1) {
        const entry = unexecuted.splice(asked, 1)[0] as ToolCallEntry;
        entry.source = 'model+mcp';
        entry.mcpExchangeId = ex.id;
      } else {
        out.push({ toolName: name, argsHash: hash, arguments: args, source: 'mcp', mcpExchangeId: ex.id });
      }
    }
  }
  return out;
}

type Keyed = Pick<ToolCallEntry, 'toolName' | 'argsHash'>;

/**
 * The minimal edit script from `a` (original) to `b` (replay), on (toolName, argsHash): the calls outside a
 * longest common subsequence are removed from `a` or added in `b`, and a removed call that is added elsewhere
 * (same name and arguments) is one `reordered` edit. Edits are ordered by position. `common` is the LCS length.
 */
export function editScript(a: readonly Keyed[], b: readonly Keyed[]): { edits: ToolEdit[]; common: number } {
  const key = (e: Keyed): string => `${e.toolName}\u0000${e.argsHash}`;
  const ka = a.map(key);
  const kb = b.map(key);
  const n = ka.length;
  const m = kb.length;
  // lcs[i][j]: LCS length of ka[i..] and kb[j..]
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i] as Uint32Array;
    const next = lcs[i + 1] as Uint32Array;
    for (let j = m - 1; j >= 0; j--)
      row[j] = ka[i] === kb[j] ? (next[j + 1] as number) + 1 : Math.max(next[j] as number, row[j + 1] as number);
  }
  const removed: number[] = [];
  const added: number[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (ka[i] === kb[j]) {
      i++;
      j++;
    } else if ((lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0)) removed.push(i++);
    else added.push(j++);
  }
  while (i < n) removed.push(i++);
  while (j < m) added.push(j++);

  const edits: { at: number; edit: ToolEdit }[] = [];
  const pairedAdds = new Set<number>();
  for (const r of removed) {
    const e = a[r] as Keyed;
    const to = added.find((x) => !pairedAdds.has(x) && kb[x] === ka[r]);
    if (to !== undefined) {
      pairedAdds.add(to);
      edits.push({ at: to, edit: { kind: 'reordered', toolName: e.toolName, argsHash: e.argsHash, from: r, to } });
    } else {
      edits.push({ at: r, edit: { kind: 'removed', toolName: e.toolName, argsHash: e.argsHash, atIndex: r } });
    }
  }
  for (const x of added) {
    if (pairedAdds.has(x)) continue;
    const e = b[x] as Keyed;
    edits.push({ at: x, edit: { kind: 'added', toolName: e.toolName, argsHash: e.argsHash, atIndex: x } });
  }
  edits.sort((p, q) => p.at - q.at || rank(p.edit) - rank(q.edit));
  return { edits: edits.map((e) => e.edit), common: lcs[0]?.[0] ?? 0 };
}

const rank = (e: ToolEdit): number => (e.kind === 'removed' ? 0 : e.kind === 'reordered' ? 1 : 2);

/** How an edit marks a position: `-` only in the original, `+` only in the replay, `~` moved. */
export type EditMark = '-' | '+' | '~';

/** The edit script as marks by position in each sequence (what the two columns of a diff show). */
export function editMarks(edits: readonly ToolEdit[]): { a: Map<number, EditMark>; b: Map<number, EditMark> } {
  const a = new Map<number, EditMark>();
  const b = new Map<number, EditMark>();
  for (const e of edits) {
    if (e.kind === 'added') b.set(e.atIndex, '+');
    else if (e.kind === 'removed') a.set(e.atIndex, '-');
    else {
      a.set(e.from, '~');
      b.set(e.to, '~');
    }
  }
  return { a, b };
}
