/**
 * What drift may send, decided before anything is sent: LLM calls, and MCP calls that only read (the session's
 * `initialize`, `tools/list`, `resources/read`, ...) or call a tool a reviewed side-effects file marks safe. Never a
 * side-effect tool, never a plain HTTP call, never a server stream. The preflight says how many calls go to which
 * hosts and what they will cost by the recorded usage and the price table.
 */
import { stepLabel } from '../inspect/diff/diff.js';
import { orderExchanges, Step } from '../inspect/steps.js';
import type { CostFn } from '../inspect/cost.js';
import type { SideEffectsFile } from '../replay/side-effects.js';
import type { Exchange, Route } from '../tape/schema.js';
import type { LoadedTape } from '../tape/store.js';
import { credentialsFor, type CredentialNeeds } from './credentials.js';

/** MCP methods that only read: safe to send again (with `tools/call` of safe tools). */
const READ_METHODS = new Set([
  'initialize',
  'notifications/initialized',
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
]);
const SETUP_METHODS = new Set(['initialize', 'notifications/initialized']);

export interface PlannedCall {
  /** The step number `tapedeck show` gives it. */
  step: number;
  label: string;
  kind: 'LLM' | 'MCP';
  exchange: Exchange;
  /** Where it goes now: the route with its upstream resolved (`--route` over the recording). */
  route: Route;
  /** The MCP session it belongs to (`ROUTE#SESSION`), for MCP calls. */
  session?: string;
  /** An MCP session's `initialize` / `notifications/initialized`, sent for the calls after it (compared too). */
  setup: boolean;
  /** Headers and query with the credentials drift adds (never from the tape) and the names it filled. */
  headers: Record<string, string>;
  query: [string, string][];
  filled: { headers: string[]; query: string[] };
  /** The origin the keys drift filled may go to, when it filled one (`key-hosts.ts`). */
  keysTo?: string;
}

export interface SkippedCall {
  step: number;
  label: string;
  reason: string;
}

export interface DriftPlan {
  calls: PlannedCall[];
  skipped: SkippedCall[];
  /** Calls per host (`api.openai.com`, `127.0.0.1:3001`), in the order first sent. */
  hosts: { host: string; calls: number }[];
  /** USD the LLM calls cost when recorded (what sending them again costs, roughly); null when a price is unknown. */
  estimatedCostUsd: number | null;
  /** LLM calls with no known price (not in `estimatedCostUsd`). */
  unpriced: number;
  /** Credentials drift could not fill (a variable not set), and headers it drops: see `credentials.ts`. */
  needs: CredentialNeeds;
}

export interface PlanOptions {
  /** Routes given now (`--route`, the config file): they win over the recording's upstreams. */
  routes?: readonly Route[];
  /** The built-in routes, for prefixes nothing else names. */
  fallbackRoutes?: readonly Route[];
  sideEffects?: SideEffectsFile;
  /** Send only this many of the calls, spread evenly over the tape (MCP session setup is added as needed). */
  sample?: number;
  /** `--key ROUTE=VAR`: the variable whose value goes in a route's redacted credential. */
  keys?: Readonly<Record<string, string>>;
  /** `--allow-host HOST`: hosts a key may go to beside the provider's own API and the routes given now (`key-hosts.ts`). */
  allowHosts?: readonly string[];
  env: NodeJS.ProcessEnv;
  costOf: CostFn;
}

/**
 * The plan, and beside it (never among its fields, so a plan written out shows none) the key values it filled in its
 * calls: what drift keeps out of everything it writes.
 */
export function planDrift(tape: LoadedTape, opts: PlanOptions): { plan: DriftPlan; filledKeys: ReadonlySet<string> } {
  const chosen = new Map((opts.routes ?? []).map((r) => [r.prefix, r.upstream] as const));
  const recorded = new Map(tape.header.routes.map((r) => [r.prefix, r.upstream] as const));
  const fallback = new Map((opts.fallbackRoutes ?? []).map((r) => [r.prefix, r.upstream] as const));
  const candidates: PlannedCall[] = [];
  const setups: PlannedCall[] = [];
  const skipped: SkippedCall[] = [];
  for (const [i, ex] of orderExchanges(tape.exchanges).entries()) {
    const label = stepLabel(new Step(i, ex));
    const why = whyNotSent(ex, opts.sideEffects);
    if (why !== undefined) {
      skipped.push({ step: i, label: ex.llm || ex.mcp ? label : `HTTP ${ex.request.method} ${ex.route}${ex.request.path}`, reason: why });
      continue;
    }
    const upstream = chosen.get(ex.route) ?? ex.upstream ?? recorded.get(ex.route) ?? fallback.get(ex.route);
    if (upstream === undefined) {
      skipped.push({ step: i, label, reason: `no upstream for ${ex.route} (--route ${ex.route}=URL)` });
      continue;
    }
    const call: PlannedCall = {
      step: i,
      label,
      kind: ex.llm ? 'LLM' : 'MCP',
      exchange: ex,
      route: { prefix: ex.route, upstream },
      setup: ex.mcp !== undefined && SETUP_METHODS.has(ex.mcp.method),
      headers: {},
      query: [],
      filled: { headers: [], query: [] },
    };
    if (ex.mcp) call.session = `${ex.route}#${ex.mcp.sessionId ?? ''}`;
    (call.setup ? setups : candidates).push(call);
  }
  const chosenCalls = sample(candidates, opts.sample);
  for (const c of candidates)
    if (!chosenCalls.includes(c)) skipped.push({ step: c.step, label: c.label, reason: `not in the sample of ${opts.sample}` });
  const sessions = new Set(chosenCalls.map((c) => c.session).filter((s) => s !== undefined));
  const calls = [...chosenCalls, ...setups.filter((s) => opts.sample === undefined || sessions.has(s.session as string))].sort(
    (a, b) => a.step - b.step,
  );
  for (const s of setups)
    if (!calls.includes(s)) skipped.push({ step: s.step, label: s.label, reason: `not in the sample of ${opts.sample}` });
  skipped.sort((a, b) => a.step - b.step);

  const filledValues = new Set<string>();
  const needs = credentialsFor(calls, {
    env: opts.env,
    keys: opts.keys ?? {},
    destinations: { given: chosen, allowed: opts.allowHosts ?? [] },
    filledValues,
  });
  const hosts = new Map<string, number>();
  let cost: number | null = 0;
  let unpriced = 0;
  for (const c of calls) {
    const host = hostOf(c.route.upstream);
    hosts.set(host, (hosts.get(host) ?? 0) + 1);
    if (c.kind !== 'LLM') continue;
    const usd = c.exchange.llm?.usage === undefined ? null : opts.costOf(c.exchange);
    if (usd === null) unpriced++;
    else if (cost !== null) cost += usd;
  }
  const plan: DriftPlan = {
    calls,
    skipped,
    hosts: [...hosts].map(([host, n]) => ({ host, calls: n })),
    estimatedCostUsd: cost === null ? null : Math.round(cost * 1e9) / 1e9,
    unpriced,
    needs,
  };
  return { plan, filledKeys: filledValues };
}

/** Why drift does not send an exchange; undefined when it may. */
function whyNotSent(ex: Exchange, file: SideEffectsFile | undefined): string | undefined {
  if (ex.transport === 'stdio') return 'an MCP server over stdio: drift sends HTTP calls only';
  if (ex.llm) return undefined;
  const m = ex.mcp;
  if (m === undefined) return 'a plain HTTP call: drift sends LLM and MCP calls only (it may be a side effect)';
  if (m.direction === 'server-to-client') return 'a server-to-client stream or reply, not a call';
  if (m.transport === 'sse') return 'the legacy HTTP+SSE transport: its answers travel on a server stream drift does not open';
  if (m.method === 'tools/call') {
    const tool = m.toolName ?? '?';
    const entry = file?.tools[tool];
    if (entry === true) return undefined;
    if (entry === false) return `a side effect: the side-effects file marks "${tool}" as one`;
    return file === undefined
      ? `tool "${tool}" may have side effects: no reviewed side-effects file marks it safe (--side-effects FILE)`
      : `tool "${tool}" may have side effects: the side-effects file does not mark it safe`;
  }
  if (READ_METHODS.has(m.method)) return undefined;
  return `MCP ${m.method}: drift sends only methods that read (initialize, tools/list, resources/read, prompts/get, ...) and safe tools`;
}

/** `n` of the calls spread evenly over them, first and last included; all of them without `n`. */
function sample<T>(calls: readonly T[], n: number | undefined): T[] {
  if (n === undefined || n >= calls.length) return [...calls];
  if (n <= 0) return [];
  if (n === 1) return [calls[0] as T];
  const picked = new Set<number>();
  for (let k = 0; k < n; k++) picked.add(Math.round((k * (calls.length - 1)) / (n - 1)));
  return [...picked].sort((a, b) => a - b).map((i) => calls[i] as T);
}

export function hostOf(upstream: string): string {
  try {
    return new URL(upstream).host;
  } catch {
    return upstream;
  }
}
