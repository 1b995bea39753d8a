/**
 * The side-effect policy: which tools (and plain-HTTP tool APIs) must never run during a replay. A recorded call of
 * a side-effect tool is answered from the tape; an unrecorded one is blocked whatever `--on-miss` says, and semantic
 * matching never applies to it. The file is reviewed by a person: replay refuses a file whose `done` is not true.
 */
import { readYamlFile } from '../config/yaml-file.js';
import { ToolAnnotationsSchema, type ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { TapedeckError } from '../errors.js';
import type { Exchange } from '../tape/schema.js';

export const HttpSideEffectSchema = z.object({
  /** Route prefix, e.g. `/payments`, or an origin reached through the forward proxy, e.g. `https://hooks.example.com`. */
  route: z.string().refine((r) => r.startsWith('/') || /^https?:\/\/[^/]+$/.test(r), {
    message: 'a route prefix (/...) or an origin (https://host[:port])',
  }),
  /** Methods that are side effects on this route (default: every method but GET, HEAD, OPTIONS). */
  methods: z.array(z.string().transform((m) => m.toUpperCase())).optional(),
  /** Only paths starting with this (below the route prefix). */
  path: z.string().optional(),
});
export type HttpSideEffect = z.infer<typeof HttpSideEffectSchema>;

export const SideEffectsFileSchema = z.object({
  /** Tool name -> true (safe to run) or false (a side effect: never executed in replay). */
  tools: z.record(z.string(), z.boolean()).default({}),
  /** Plain-HTTP tool APIs whose calls are side effects. */
  http: z.array(HttpSideEffectSchema).default([]),
  /** Set to true by the person who reviewed the file. */
  done: z.boolean().default(false),
});
export type SideEffectsFile = z.infer<typeof SideEffectsFileSchema>;

/** MCP tool annotations, as `tools/list` reports them (the MCP SDK's own schema). */
export type { ToolAnnotations };

export interface Verdict {
  sideEffect: boolean;
  /** Why, in words a person can check. */
  reason: string;
}

export interface SideEffectPolicy {
  /** The reviewed file, when there is one. */
  readonly file: SideEffectsFile | undefined;
  isSideEffect(toolName: string, annotations?: ToolAnnotations): boolean;
  /** The verdict on a tool with its reason. Annotations default to what the tape recorded for the tool. */
  classifyTool(toolName: string, annotations?: ToolAnnotations): Verdict;
  /**
   * Whether a tool the tape cannot answer may run for real (misses going live). Only a reviewed side-effects file
   * that marks the tool safe allows it: annotations recorded on a tape are claims anyone editing the tape can make.
   */
  liveTool(toolName: string): Verdict;
  /** Whether a plain-HTTP call is a side effect (only routes the file names are). */
  httpSideEffect(route: string, method: string, path: string): Verdict;
}

/** Read, validate and check a side-effects file. Throws a one-line `TapedeckError` when it is invalid or not reviewed. */
export function loadSideEffects(file: string, opts: { requireDone?: boolean } = {}): SideEffectsFile {
  const data = readYamlFile(file, SideEffectsFileSchema, 'side-effects file');
  if ((opts.requireDone ?? true) && data.done !== true) {
    throw new TapedeckError(
      'SIDE_EFFECTS_NOT_REVIEWED',
      `side-effects file ${file} is not reviewed${decisions(data)}: check every entry, then set "done: true"`,
    );
  }
  return data;
}

/** What a file decides, in short: ` (it marks a, b as side effects and c as safe)`; empty for an empty file. */
function decisions(data: SideEffectsFile): string {
  const names = (safe: boolean): string[] =>
    Object.entries(data.tools)
      .filter(([, v]) => v === safe)
      .map(([k]) => k);
  const list = (xs: string[], what: string): string | undefined =>
    xs.length === 0 ? undefined : `${xs.length > 8 ? `${xs.slice(0, 8).join(', ')} and ${xs.length - 8} more` : xs.join(', ')} ${what}`;
  const effects = names(false);
  const parts = [
    list(effects, effects.length === 1 ? 'as a side effect' : 'as side effects'),
    list(names(true), 'as safe'),
    data.http.length > 0 ? `${data.http.length} HTTP route(s) as side effects` : undefined,
  ].filter((x) => x !== undefined);
  return parts.length === 0 ? '' : ` (it marks ${parts.join(' and ')})`;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Build the policy from a reviewed file (optional) and the annotations the tape recorded (`tools/list` answers).
 * Decision order for a tool: the file's entry, then annotations (`readOnlyHint: true` is safe), else a side effect.
 * That verdict decides how a tool call is *matched* (a side effect exactly or not at all); whether a call the tape
 * cannot answer may *run* is `liveTool`, which trusts the reviewed file alone.
 */
export function createSideEffectPolicy(
  opts: {
    file?: SideEffectsFile;
    recordedAnnotations?: ReadonlyMap<string, ToolAnnotations>;
    /**
     * The tools the tape's `tools/list` answers name; undefined when the tape has no such answer. Only used to say
     * why a tool counts as a side effect (no list at all, not on it, listed without annotations).
     */
    listedTools?: ReadonlySet<string>;
  } = {},
): SideEffectPolicy {
  const file = opts.file;
  const recorded = opts.recordedAnnotations ?? new Map<string, ToolAnnotations>();
  const annotationsSay = (name: string): string => {
    if (recorded.has(name)) return 'its annotations do not say it is read-only';
    if (opts.listedTools === undefined)
      return recorded.size === 0
        ? 'the tape has no tools/list answer to read its annotations from (the client never listed the tools while recording)'
        : 'its annotations do not say it is read-only';
    if (!opts.listedTools.has(name)) return "the tape's tools/list answer does not list it";
    return 'tools/list gave it no annotations';
  };
  const classifyTool = (name: string, annotations?: ToolAnnotations): Verdict => {
    const entry = file?.tools[name];
    if (entry !== undefined)
      return entry
        ? { sideEffect: false, reason: `the side-effects file marks "${name}" safe` }
        : { sideEffect: true, reason: `the side-effects file marks "${name}" as a side effect` };
    const a = annotations ?? recorded.get(name);
    if (a?.readOnlyHint === true)
      return {
        sideEffect: false,
        reason: `"${name}" is annotated readOnlyHint: true${file ? ' and the side-effects file does not name it' : ''}`,
      };
    const why = file ? 'the side-effects file does not name it' : 'no side-effects file was given';
    const said = a !== undefined && !recorded.has(name) ? 'its annotations do not say it is read-only' : annotationsSay(name);
    return { sideEffect: true, reason: `"${name}" counts as a side effect: ${why}, and ${said}` };
  };
  return {
    file,
    classifyTool,
    isSideEffect: (name, annotations) => classifyTool(name, annotations).sideEffect,
    liveTool(name) {
      const entry = file?.tools[name];
      if (entry === true) return { sideEffect: false, reason: `the side-effects file marks "${name}" safe` };
      if (entry === false) return { sideEffect: true, reason: `the side-effects file marks "${name}" as a side effect` };
      const why = file ? 'the side-effects file does not name it' : 'no reviewed side-effects file marks it safe';
      return {
        sideEffect: true,
        reason: `"${name}" never runs for real in replay: ${why} (annotations on a tape are not trusted to run a tool)`,
      };
    },
    httpSideEffect(route, method, path) {
      const m = method.toUpperCase();
      for (const rule of file?.http ?? []) {
        if (rule.route !== route) continue;
        if (rule.path !== undefined && !path.startsWith(rule.path)) continue;
        const hit = rule.methods ? rule.methods.includes(m) : !SAFE_METHODS.has(m);
        if (hit) return { sideEffect: true, reason: `the side-effects file marks ${m} ${route}${rule.path ?? ''} as a side effect` };
      }
      return { sideEffect: false, reason: 'no side-effects rule covers this HTTP call' };
    },
  };
}

/** Every tool the tape's `tools/list` answers describe: name -> annotations and description. */
export function recordedTools(exchanges: readonly Exchange[]): Map<string, { annotations?: ToolAnnotations; description?: string }> {
  const out = new Map<string, { annotations?: ToolAnnotations; description?: string }>();
  for (const ex of exchanges) {
    if (ex.mcp?.method !== 'tools/list') continue;
    const tools = (ex.mcp.result as { tools?: unknown } | undefined)?.tools;
    if (!Array.isArray(tools)) continue;
    for (const t of tools as { name?: unknown; annotations?: unknown; description?: unknown }[]) {
      if (typeof t.name !== 'string') continue;
      const entry: { annotations?: ToolAnnotations; description?: string } = {};
      // What the tape says is read through the SDK's schema: an annotation of the wrong type counts as absent.
      const annotations = ToolAnnotationsSchema.safeParse(t.annotations);
      if (t.annotations !== undefined && annotations.success) entry.annotations = annotations.data;
      if (typeof t.description === 'string') entry.description = t.description;
      out.set(t.name, entry);
    }
  }
  return out;
}

/** The policy for replaying a tape: the reviewed file (if any) plus the annotations the tape recorded. */
export function policyForTape(exchanges: readonly Exchange[], file?: SideEffectsFile): SideEffectPolicy {
  const annotations = new Map<string, ToolAnnotations>();
  const tools = recordedTools(exchanges);
  for (const [name, t] of tools) if (t.annotations) annotations.set(name, t.annotations);
  const listed = exchanges.some((ex) => ex.mcp?.method === 'tools/list' && ex.mcp.result !== undefined);
  return createSideEffectPolicy({
    ...(file ? { file } : {}),
    recordedAnnotations: annotations,
    ...(listed ? { listedTools: new Set(tools.keys()) } : {}),
  });
}

/** The proxy's `allowLive` check for plain-HTTP calls: a call the file marks as a side effect is never forwarded. */
export function allowLiveFor(
  policy: SideEffectPolicy,
): (req: { route: { prefix: string }; method: string; path: string }) => { allowed: true } | { allowed: false; reason: string } {
  return (req) => {
    const v = policy.httpSideEffect(req.route.prefix, req.method, req.path);
    return v.sideEffect ? { allowed: false, reason: `blocked: ${v.reason}` } : { allowed: true };
  };
}
