/**
 * `tapedeck drift`: send a tape's calls to the live upstreams again and say how today's answers differ from the
 * recorded ones (see `compare.ts` for what is compared and how severe each change is). The plan is made, checked
 * (credentials) and shown (`onPreflight`) before anything is sent. `refresh` writes the fresh answers as a tape
 * through the store: the recorded exchanges in their order, each sent call's answer in place of the recorded one,
 * everything not sent as recorded.
 */
import { Agent } from 'undici';
import { TapedeckError } from '../errors.js';
import type { CostFn } from '../inspect/cost.js';
import { orderExchanges } from '../inspect/steps.js';
import type { SideEffectsFile } from '../replay/side-effects.js';
import type { RedactOptions } from '../tape/redact.js';
import type { Exchange, Route } from '../tape/schema.js';
import type { NewExchange, TapeStore } from '../tape/store.js';
import { compareCall, type CallSide } from './compare.js';
import { missingLine } from './credentials.js';
import { DEFAULT_THRESHOLDS, SEVERITIES, type Finding, type Severity, type Thresholds } from './finding.js';
import { hostOf, planDrift, type DriftPlan, type PlannedCall, type SkippedCall } from './plan.js';
import { sendCalls } from './send.js';

export interface DriftOptions {
  store: TapeStore;
  /** A tape reference (name, unique prefix, `latest`, a path). */
  tape: string;
  routes?: readonly Route[];
  fallbackRoutes?: readonly Route[];
  sideEffects?: SideEffectsFile;
  sample?: number;
  keys?: Readonly<Record<string, string>>;
  env?: NodeJS.ProcessEnv;
  costOf: CostFn;
  thresholds?: Partial<Thresholds>;
  /** Seconds, as in the config: to connect, to the response head, between two chunks. */
  timeouts?: { connect: number; response: number; idle: number };
  /** Write the fresh answers as a tape: under `saveAs`, or over the tape itself. */
  refresh?: { saveAs?: string; overwrite?: boolean };
  redact?: RedactOptions;
  /** Told the plan before anything is sent; `dryRun` stops there. */
  onPreflight?: (plan: DriftPlan, tape: string) => void;
  dryRun?: boolean;
  onSend?: (call: PlannedCall) => void;
}

export type CallVerdict = Severity | 'unchanged';

export interface DriftCall {
  step: number;
  call: string;
  route: string;
  host: string;
  verdict: CallVerdict;
  findings: Finding[];
  similarity: number | null;
  recorded: CallSide;
  fresh: CallSide;
}

export interface DriftReport {
  tape: string;
  /** The worst verdict over the calls (`unchanged` when none changed, or nothing was sent). */
  verdict: CallVerdict;
  counts: Record<CallVerdict, number>;
  calls: DriftCall[];
  skipped: SkippedCall[];
  hosts: { host: string; calls: number }[];
  estimatedCostUsd: number | null;
  /** USD the fresh answers cost by their usage; null when a price is unknown. */
  costUsd: number | null;
  thresholds: Thresholds;
  /** Headers a redacted credential was in that drift had no key for (left out). */
  dropped: { route: string; name: string }[];
  /** The tape the fresh answers were written to (`refresh`), else null. */
  refreshed: string | null;
  /** Only planned (`dryRun`). */
  dryRun: boolean;
}

const RANK: Record<CallVerdict, number> = { breaking: 3, notable: 2, noise: 1, unchanged: 0 };

/** Whether a verdict is at least as bad as `level`. */
export function atLeast(verdict: CallVerdict, level: Severity): boolean {
  return RANK[verdict] >= RANK[level];
}

export async function runDrift(opts: DriftOptions): Promise<DriftReport> {
  const found = await opts.store.resolve(opts.tape);
  const tape = await found.store.load(found.name);
  const thresholds = { ...DEFAULT_THRESHOLDS, ...opts.thresholds };
  const plan = planDrift(tape, {
    ...(opts.routes ? { routes: opts.routes } : {}),
    ...(opts.fallbackRoutes ? { fallbackRoutes: opts.fallbackRoutes } : {}),
    ...(opts.sideEffects ? { sideEffects: opts.sideEffects } : {}),
    ...(opts.sample !== undefined ? { sample: opts.sample } : {}),
    ...(opts.keys ? { keys: opts.keys } : {}),
    env: opts.env ?? process.env,
    costOf: opts.costOf,
  });
  opts.onPreflight?.(plan, found.name);
  const report: DriftReport = {
    tape: found.name,
    verdict: 'unchanged',
    counts: { breaking: 0, notable: 0, noise: 0, unchanged: 0 },
    calls: [],
    skipped: plan.skipped,
    hosts: plan.hosts,
    estimatedCostUsd: plan.estimatedCostUsd,
    costUsd: null,
    thresholds,
    dropped: plan.needs.dropped,
    refreshed: null,
    dryRun: opts.dryRun === true,
  };
  if (opts.dryRun === true) return report;
  const missing = missingLine(plan.needs);
  if (missing !== undefined) throw new TapedeckError('MISSING_CREDENTIALS', missing);

  const t = opts.timeouts ?? { connect: 10, response: 300, idle: 120 };
  const dispatcher = new Agent({ connect: { timeout: t.connect * 1000 }, headersTimeout: t.response * 1000, bodyTimeout: t.idle * 1000 });
  let fresh: Map<PlannedCall, Exchange>;
  try {
    fresh = await sendCalls(plan.calls, { dispatcher, ...(opts.onSend ? { onSend: opts.onSend } : {}) });
  } finally {
    await dispatcher.close().catch(() => undefined);
  }

  let cost: number | null = 0;
  for (const call of plan.calls) {
    const ex = fresh.get(call) as Exchange;
    const c = compareCall(call.exchange, ex, { thresholds, costOf: opts.costOf });
    const verdict = worst(c.findings);
    report.counts[verdict]++;
    if (RANK[verdict] > RANK[report.verdict]) report.verdict = verdict;
    report.calls.push({
      step: call.step,
      call: call.label,
      route: call.route.prefix,
      host: hostOf(call.route.upstream),
      verdict,
      findings: c.findings.sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity)),
      similarity: c.similarity,
      recorded: c.recorded,
      fresh: c.fresh,
    });
    if (ex.llm?.usage !== undefined) {
      const usd = opts.costOf(ex);
      cost = usd === null || cost === null ? null : cost + usd;
    }
  }
  report.costUsd = cost === null ? null : Math.round(cost * 1e9) / 1e9;
  if (opts.refresh) report.refreshed = await writeRefreshed(opts, found.store, found.name, tape.header.routes, tape.exchanges, fresh);
  return report;
}

function worst(findings: readonly Finding[]): CallVerdict {
  let v: CallVerdict = 'unchanged';
  for (const f of findings) if (RANK[f.severity] > RANK[v]) v = f.severity;
  return v;
}

/** The refreshed tape: every recorded exchange in order, a sent call's fresh answer in its place. */
async function writeRefreshed(
  opts: DriftOptions,
  store: TapeStore,
  name: string,
  routes: readonly Route[],
  recorded: readonly Exchange[],
  fresh: ReadonlyMap<PlannedCall, Exchange>,
): Promise<string> {
  const byId = new Map([...fresh].map(([call, ex]) => [call.exchange.id, { call, ex }] as const));
  const target = opts.refresh?.saveAs ?? name;
  const given = new Map((opts.routes ?? []).map((r) => [r.prefix, r.upstream] as const));
  const writer = await store.openWriter({
    name: target,
    header: { mode: 'record', routes: routes.map((r) => ({ prefix: r.prefix, upstream: given.get(r.prefix) ?? r.upstream })) },
    ifExists: opts.refresh?.saveAs === undefined || opts.refresh.overwrite === true ? 'overwrite' : 'fail',
    ...(opts.redact ? { redact: opts.redact } : {}),
  });
  // The server gave each MCP session a new id: the calls kept as recorded in it carry the new one too.
  const sessionIds = new Map<string, string>();
  for (const { call, ex } of byId.values())
    if (call.exchange.mcp?.sessionId !== undefined && ex.mcp?.sessionId !== undefined)
      sessionIds.set(call.exchange.mcp.sessionId, ex.mcp.sessionId);
  try {
    for (const ex of orderExchanges(recorded)) {
      const sent = byId.get(ex.id);
      const { type: _t, id: _i, seq: _s, ...rest } = sent?.ex ?? withSession(ex, sessionIds);
      await writer.append({ ...rest, offsetMs: ex.offsetMs } as NewExchange);
    }
  } finally {
    await writer.close();
  }
  if (writer.failure) throw writer.failure;
  return target;
}

function withSession(ex: Exchange, ids: ReadonlyMap<string, string>): Exchange {
  const old = ex.request.headers['mcp-session-id'] ?? ex.mcp?.sessionId;
  const now = old === undefined ? undefined : ids.get(old);
  if (now === undefined) return ex;
  return {
    ...ex,
    request: {
      ...ex.request,
      headers: { ...ex.request.headers, ...(ex.request.headers['mcp-session-id'] ? { 'mcp-session-id': now } : {}) },
    },
    ...(ex.mcp ? { mcp: { ...ex.mcp, sessionId: now } } : {}),
  };
}
