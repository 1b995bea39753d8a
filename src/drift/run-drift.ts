/**
 * `tapedeck drift`: send a tape's calls to the live upstreams again and say how today's answers differ from the
 * recorded ones (see `compare.ts` for what is compared and how severe each change is). The plan is made, checked
 * (credentials) and shown (`onPreflight`) before anything is sent. `refresh` writes the fresh answers as a tape
 * through the store (`refresh.ts`). Answers too large to hold are kept apart as they stream, and what drift writes is
 * redacted (`scrub.ts`); keys go only where they belong (`key-hosts.ts`).
 */
import { Agent } from 'undici';
import { TapedeckError } from '../errors.js';
import type { CostFn } from '../inspect/cost.js';
import type { SideEffectsFile } from '../replay/side-effects.js';
import { readEvents } from '../tape/event-file.js';
import { STREAMED_BODY_BYTES } from '../tape/large-body.js';
import type { RedactOptions } from '../tape/redaction/redact.js';
import type { Exchange, Route } from '../tape/schema.js';
import type { TapeStore } from '../tape/store.js';
import { compareCall, type CallSide } from './compare.js';
import { missingLine } from './credentials.js';
import { DEFAULT_THRESHOLDS, SEVERITIES, type Finding, type Severity, type Thresholds } from './finding.js';
import { hostOf, planDrift, type DriftPlan, type PlannedCall, type SkippedCall } from './plan.js';
import { openScratch, writeRefreshed, type Place } from './refresh.js';
import { createScrubber } from './scrub.js';
import { sendCalls } from './send.js';
import { readStream, type StreamRead } from './stream-read.js';

export interface DriftOptions {
  store: TapeStore;
  /** A tape reference (name, unique prefix, `latest`, a path). */
  tape: string;
  routes?: readonly Route[];
  fallbackRoutes?: readonly Route[];
  sideEffects?: SideEffectsFile;
  sample?: number;
  keys?: Readonly<Record<string, string>>;
  /** `--allow-host HOST`: hosts a key may go to beside the provider's own API and the routes given (`key-hosts.ts`). */
  allowHosts?: readonly string[];
  env?: NodeJS.ProcessEnv;
  costOf: CostFn;
  thresholds?: Partial<Thresholds>;
  /** Seconds, as in the config: to connect, to the response head, between two chunks. */
  timeouts?: { connect: number; response: number; idle: number };
  /** Write the fresh answers as a tape: under `saveAs`, or over the tape itself. */
  /** Write the refreshed tape (`indexKey`: what a store indexes its exchanges by, as record's writer does). */
  refresh?: { saveAs?: string; overwrite?: boolean; indexKey?: (ex: Exchange) => string };
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
  /** Keys drift did not send because the call went elsewhere than where they may go (`key-hosts.ts`). */
  withheld: { route: string; host: string; names: string[]; reason: string }[];
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
  // Bodies and streams too large to hold stay in the store, read as streams when needed (bounded memory).
  const tape = await found.store.load(found.name, { inlineUpTo: STREAMED_BODY_BYTES });
  const thresholds = { ...DEFAULT_THRESHOLDS, ...opts.thresholds };
  const { plan, filledKeys } = planDrift(tape, {
    ...(opts.routes ? { routes: opts.routes } : {}),
    ...(opts.fallbackRoutes ? { fallbackRoutes: opts.fallbackRoutes } : {}),
    ...(opts.sideEffects ? { sideEffects: opts.sideEffects } : {}),
    ...(opts.sample !== undefined ? { sample: opts.sample } : {}),
    ...(opts.keys ? { keys: opts.keys } : {}),
    ...(opts.allowHosts ? { allowHosts: opts.allowHosts } : {}),
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
    withheld: plan.needs.withheld,
    refreshed: null,
    dryRun: opts.dryRun === true,
  };
  if (opts.dryRun === true) return report;
  const missing = missingLine(plan.needs);
  if (missing !== undefined) throw new TapedeckError('MISSING_CREDENTIALS', missing);

  const t = opts.timeouts ?? { connect: 10, response: 300, idle: 120 };
  const dispatcher = new Agent({ connect: { timeout: t.connect * 1000 }, headersTimeout: t.response * 1000, bodyTimeout: t.idle * 1000 });
  const scrub = createScrubber(filledKeys, opts.redact);
  const source: Place = { open: (b) => found.store.openBlob(found.name, b) };
  const scratch = openScratch();
  try {
    let fresh: Map<PlannedCall, Exchange>;
    try {
      fresh = await sendCalls(plan.calls, {
        dispatcher,
        spill: scratch.spill,
        openRecorded: source.open,
        scrub,
        ...(opts.onSend ? { onSend: opts.onSend } : {}),
      });
    } finally {
      await dispatcher.close().catch(() => undefined);
    }

    let cost: number | null = 0;
    for (const call of plan.calls) {
      const ex = fresh.get(call) as Exchange;
      const streams = { recorded: await streamOf(call.exchange, source), fresh: await streamOf(ex, scratch) };
      const c = compareCall(call.exchange, ex, { thresholds, costOf: opts.costOf, streams });
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
    if (opts.refresh)
      report.refreshed = await writeRefreshed(
        { store: found.store, name: found.name, routes: tape.header.routes, recorded: tape.exchanges },
        fresh,
        { ...opts.refresh, ...(opts.routes ? { routes: opts.routes } : {}), ...(opts.redact ? { redact: opts.redact } : {}) },
        { source, scratch, scrub },
      );
  } finally {
    scratch.remove();
  }
  // Built from the scrubbed answers already; once more as a whole, as record would write it.
  return scrub.value(report);
}

/** The shape and model of a stream stored apart, read event by event; undefined for any other answer. */
async function streamOf(ex: Exchange, from: Place): Promise<StreamRead | undefined> {
  const stored = ex.response?.eventsFile;
  return stored === undefined ? undefined : readStream(readEvents(from.open(stored), stored));
}

function worst(findings: readonly Finding[]): CallVerdict {
  let v: CallVerdict = 'unchanged';
  for (const f of findings) if (RANK[f.severity] > RANK[v]) v = f.severity;
  return v;
}
