/**
 * An MCP call against the same call sent again: the JSON-RPC outcome (an error, `isError`), the result's shape, and
 * per method what a client acts on: the tools `tools/list` offers (one gone is breaking, a new one notable, a newly
 * required argument breaking, another input schema notable), a tool result's text, the server's version.
 */
import stringify from 'fast-json-stable-stringify';
import { textSimilarity } from '../inspect/diff/similarity.js';
import { shorten } from '../inspect/format.js';
import type { Exchange } from '../tape/schema.js';
import { shapeFinding, type Finding, type Severity, type Thresholds } from './finding.js';
import { compareShapes, shapeOf } from './shape.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);

export function compareMcp(recorded: Exchange, fresh: Exchange, t: Thresholds): Finding[] {
  const out: Finding[] = [];
  const add = (severity: Severity, aspect: string, message: string): void => void out.push({ severity, aspect, message });
  const a = recorded.mcp;
  const b = fresh.mcp;
  if (a === undefined || b === undefined) return out;
  const method = a.method + (a.toolName ? ` ${a.toolName}` : '');
  if (a.error === undefined && b.error !== undefined)
    add('breaking', 'error', `${method} answers a JSON-RPC error now: ${shorten(obj(b.error)?.message ?? b.error, 100)}`);
  else if (a.error !== undefined && b.error === undefined) add('notable', 'error', `${method} answers without the recorded error now`);
  if ((a.isError ?? false) !== (b.isError ?? false))
    add(
      b.isError === true ? 'breaking' : 'notable',
      'error',
      b.isError === true ? `${method} reports isError: true now` : `${method} no longer reports isError`,
    );
  if (a.result === undefined || b.result === undefined) return out;

  if (a.method === 'tools/list') toolsList(a.result, b.result, add);
  else for (const c of compareShapes(shapeOf(a.result), shapeOf(b.result))) shapeFinding(c, add, 'result ');

  if (a.method === 'tools/call' && a.isError !== true && b.isError !== true) {
    const ta = contentText(a.result);
    const tb = contentText(b.result);
    if (ta !== tb) {
      const sim = textSimilarity(ta, tb);
      if (sim < t.minSimilarity)
        add('notable', 'answer', `another result (similarity ${sim.toFixed(2)} < ${t.minSimilarity}): ${JSON.stringify(shorten(tb, 80))}`);
      else add('noise', 'answer', `result reworded (similarity ${sim.toFixed(2)})`);
    }
  }
  if (a.method === 'initialize') {
    const version = (r: unknown): string | undefined => {
      const v = obj(obj(r)?.serverInfo)?.version;
      return typeof v === 'string' ? v : undefined;
    };
    const pv = (r: unknown): unknown => obj(r)?.protocolVersion;
    if (version(a.result) !== version(b.result))
      add('noise', 'server', `server version ${version(b.result) ?? '-'}, was ${version(a.result) ?? '-'}`);
    if (pv(a.result) !== pv(b.result)) add('notable', 'server', `protocol version ${String(pv(b.result))}, was ${String(pv(a.result))}`);
  }
  return out;
}

/** The tools on offer, by name: gone, new, their input schemas (arguments newly required, or otherwise changed). */
function toolsList(a: unknown, b: unknown, add: (s: Severity, aspect: string, m: string) => void): void {
  const tools = (r: unknown): Map<string, Obj> => {
    const list = obj(r)?.tools;
    const m = new Map<string, Obj>();
    if (Array.isArray(list)) for (const t of list) if (typeof obj(t)?.name === 'string') m.set(obj(t)?.name as string, t as Obj);
    return m;
  };
  const before = tools(a);
  const after = tools(b);
  for (const name of before.keys()) if (!after.has(name)) add('breaking', 'tools', `tool "${name}" is no longer offered`);
  for (const name of after.keys()) if (!before.has(name)) add('notable', 'tools', `new tool "${name}"`);
  for (const [name, t] of before) {
    const u = after.get(name);
    if (u === undefined) continue;
    const required = (x: Obj): string[] => {
      const r = obj(x.inputSchema)?.required;
      return Array.isArray(r) ? r.filter((k): k is string => typeof k === 'string') : [];
    };
    const newly = required(u).filter((k) => !required(t).includes(k));
    if (newly.length > 0) add('breaking', 'tools', `tool "${name}" requires ${newly.map((k) => `"${k}"`).join(', ')} now`);
    else if (stringify(t.inputSchema ?? null) !== stringify(u.inputSchema ?? null))
      add('notable', 'tools', `tool "${name}" has another input schema`);
    if (stringify(t.annotations ?? null) !== stringify(u.annotations ?? null))
      add('notable', 'tools', `tool "${name}" has other annotations: ${shorten(stringify(u.annotations ?? null), 80)}`);
  }
}

function contentText(result: unknown): string {
  const content = obj(result)?.content;
  if (!Array.isArray(content)) return '';
  return content.map((c) => (typeof obj(c)?.text === 'string' ? (obj(c)?.text as string) : stringify(c))).join('\n');
}
