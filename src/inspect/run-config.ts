/**
 * The configuration a run was made with, as its tape shows it (models, providers, routes, temperature, seed, the
 * tools offered), and what differs between two runs, including the overrides a modified replay declares in its
 * header (`replayOf.overrides`).
 */
import stringify from 'fast-json-stable-stringify';
import type { Exchange, TapeHeader } from '../tape/schema.js';
import { isObj } from '../providers/json.js';

export interface ConfigChange {
  field: string;
  /** The original run's value: one value, a list when the run used several, null when it never said. */
  original: unknown;
  replay: unknown;
}

/** Fields compared, in report order. */
export const CONFIG_FIELDS = ['model', 'provider', 'route', 'temperature', 'seed', 'tools'] as const;
export type RunConfig = Record<(typeof CONFIG_FIELDS)[number], unknown>;

export function runConfig(ordered: readonly Exchange[]): RunConfig {
  const llm = ordered.filter((ex) => ex.llm !== undefined);
  const tools = new Set<string>();
  for (const ex of llm) {
    const offered = ex.llm?.params.tools;
    if (Array.isArray(offered)) for (const t of offered) if (typeof t === 'string') tools.add(t);
  }
  for (const ex of ordered) {
    if (ex.mcp?.method !== 'tools/list' || !isObj(ex.mcp.result) || !Array.isArray(ex.mcp.result.tools)) continue;
    for (const t of ex.mcp.result.tools) if (isObj(t) && typeof t.name === 'string') tools.add(t.name);
  }
  return {
    model: collapse(llm.map((ex) => ex.llm?.model)),
    provider: collapse(llm.map((ex) => ex.llm?.provider)),
    route: collapse(llm.map((ex) => ex.route)),
    temperature: collapse(llm.map((ex) => ex.llm?.params.temperature)),
    seed: collapse(llm.map((ex) => ex.llm?.params.seed)),
    tools: tools.size === 0 ? null : [...tools].sort(),
  };
}

/**
 * What differs between two runs' configurations. Overrides a replay header declares (`--model`, `--temperature`,
 * `--system-prompt`, ...) are reported too when the exchanges do not already show them.
 */
export function configChanges(
  a: { exchanges: readonly Exchange[]; header: TapeHeader },
  b: { exchanges: readonly Exchange[]; header: TapeHeader },
): ConfigChange[] {
  const ca = runConfig(a.exchanges);
  const cb = runConfig(b.exchanges);
  const out: ConfigChange[] = [];
  for (const field of CONFIG_FIELDS) if (!same(ca[field], cb[field])) out.push({ field, original: ca[field], replay: cb[field] });
  const oa = a.header.replayOf?.overrides ?? {};
  const ob = b.header.replayOf?.overrides ?? {};
  for (const field of new Set([...Object.keys(oa), ...Object.keys(ob)])) {
    if (out.some((c) => c.field === field)) continue;
    const known = (CONFIG_FIELDS as readonly string[]).includes(field);
    const original = field in oa ? oa[field] : known ? ca[field as keyof RunConfig] : null;
    const replay = field in ob ? ob[field] : known ? cb[field as keyof RunConfig] : null;
    if (!same(original, replay)) out.push({ field, original: original ?? null, replay: replay ?? null });
  }
  return out;
}

/** Distinct values in order of first use: null for none, the value for one, the list for more. */
function collapse(values: readonly unknown[]): unknown {
  const seen = new Map<string, unknown>();
  for (const v of values) if (v !== undefined && v !== null) seen.set(stringify(v), seen.get(stringify(v)) ?? v);
  const list = [...seen.values()];
  return list.length === 0 ? null : list.length === 1 ? list[0] : list;
}

function same(x: unknown, y: unknown): boolean {
  return stringify(x ?? null) === stringify(y ?? null);
}
