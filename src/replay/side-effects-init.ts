/**
 * Suggest a side-effects file from what a tape saw: MCP tool annotations first, then name and description keywords.
 * Every suggestion carries its reason; the file is written with `done: false` so a person must review it.
 */
import { detectLlmApi } from '../providers/index.js';
import type { Exchange } from '../tape/schema.js';
import { recordedTools, type ToolAnnotations } from './side-effects.js';

export interface ToolSuggestion {
  name: string;
  safe: boolean;
  reason: string;
}

export interface HttpSuggestion {
  route: string;
  methods: string[];
  reason: string;
}

const EFFECT_WORDS = [
  'send',
  'write',
  'delete',
  'remove',
  'create',
  'update',
  'post',
  'pay',
  'charge',
  'transfer',
  'edit',
  'move',
  'rename',
  'upload',
  'insert',
  'put',
  'patch',
  'set',
  'submit',
  'publish',
  'deploy',
  'merge',
  'push',
  'commit',
  'execute',
  'run',
  'exec',
  'kill',
  'drop',
  'cancel',
  'approve',
  'book',
  'order',
  'purchase',
  'email',
  'notify',
  'trigger',
  'toggle',
  'mkdir',
  'install',
  'modify',
  'replace',
  'add',
];
const READ_WORDS = [
  'get',
  'list',
  'read',
  'search',
  'find',
  'fetch',
  'query',
  'lookup',
  'describe',
  'show',
  'view',
  'count',
  'echo',
  'info',
  'stat',
  'check',
  'tree',
  'directory',
];

function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/** The keyword a word is a form of (`posts`, `posted`, `posting` -> `post`), if any. */
function keyword(ws: string[], list: readonly string[]): string | undefined {
  for (const w of ws) {
    const k = list.find((k) => w === k || [`${k}s`, `${k}es`, `${k}ed`, `${k}d`, `${k}ing`, `${k.replace(/e$/, '')}ing`].includes(w));
    if (k !== undefined) return w === k ? `"${k}"` : `"${w}" (a form of "${k}")`;
  }
  return undefined;
}

/** Classify one tool: annotations first, then keywords in the name, then in the description; unknown is a side effect. */
export function suggestTool(name: string, annotations?: ToolAnnotations, description?: string): ToolSuggestion {
  if (annotations?.readOnlyHint === true) return { name, safe: true, reason: 'annotated readOnlyHint: true' };
  if (annotations?.destructiveHint === true) return { name, safe: false, reason: 'annotated destructiveHint: true' };
  if (annotations?.readOnlyHint === false)
    return {
      name,
      safe: false,
      reason: `annotated readOnlyHint: false${annotations.destructiveHint === false ? ' (additive, not destructive)' : ''}`,
    };
  const nameWords = words(name);
  const effect = keyword(nameWords, EFFECT_WORDS);
  if (effect) return { name, safe: false, reason: `name contains ${effect}` };
  const read = keyword(nameWords, READ_WORDS);
  if (read) return { name, safe: true, reason: `name contains ${read} and no side-effect word` };
  const descEffect = keyword(words(description ?? ''), EFFECT_WORDS);
  if (descEffect) return { name, safe: false, reason: `description contains ${descEffect}` };
  return { name, safe: false, reason: 'no annotation and no telling keyword: a side effect until reviewed' };
}

/** Suggestions for every tool the tape listed or called, and for plain-HTTP routes the tape wrote to. */
export function suggestSideEffects(exchanges: readonly Exchange[]): { tools: ToolSuggestion[]; http: HttpSuggestion[] } {
  const listed = recordedTools(exchanges);
  const names = new Set(listed.keys());
  for (const ex of exchanges) if (ex.mcp?.toolName !== undefined) names.add(ex.mcp.toolName);
  const tools = [...names].sort().map((n) => {
    const t = listed.get(n);
    const s = suggestTool(n, t?.annotations, t?.description);
    return t === undefined ? { ...s, reason: `${s.reason} (called, but never listed with annotations)` } : s;
  });
  const writes = new Map<string, Set<string>>();
  for (const ex of exchanges) {
    if (
      ex.transport !== 'http' ||
      ex.mcp !== undefined ||
      ex.llm !== undefined ||
      detectLlmApi(ex.route, ex.request.path, ex.request.method) !== undefined
    )
      continue;
    const m = ex.request.method.toUpperCase();
    if (['GET', 'HEAD', 'OPTIONS'].includes(m)) continue;
    const set = writes.get(ex.route) ?? new Set<string>();
    set.add(m);
    writes.set(ex.route, set);
  }
  const http = [...writes]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([route, methods]) => ({
      route,
      methods: [...methods].sort(),
      reason: `the tape holds ${[...methods].sort().join(', ')} calls on ${route} that are neither LLM nor MCP traffic`,
    }));
  return { tools, http };
}

function yamlKey(name: string): string {
  return /^[A-Za-z_][\w.-]*$/.test(name) ? name : JSON.stringify(name);
}

/** The suggested file as commented YAML, `done: false`. */
export function renderSideEffectsFile(tape: string, s: { tools: ToolSuggestion[]; http: HttpSuggestion[] }): string {
  const lines = [
    `# Side effects for tape "${tape}", suggested by tapedeck side-effects init.`,
    '# true: safe to run; false: a side effect, never executed in replay (answered from the tape, or blocked).',
    '# Review every line, then set done: true (replay refuses this file until then).',
    s.tools.length === 0 ? 'tools: {}' : 'tools:',
  ];
  const width = Math.max(0, ...s.tools.map((t) => `${yamlKey(t.name)}: ${t.safe}`.length));
  for (const t of s.tools) lines.push(`  ${`${yamlKey(t.name)}: ${t.safe}`.padEnd(width)}  # ${t.reason}`);
  if (s.http.length === 0) lines.push('http: []');
  else {
    lines.push('http:');
    for (const h of s.http) lines.push(`  - route: ${JSON.stringify(h.route)}  # ${h.reason}`, `    methods: [${h.methods.join(', ')}]`);
  }
  lines.push('done: false');
  return lines.join('\n') + '\n';
}
