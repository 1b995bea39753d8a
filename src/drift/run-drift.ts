/**
 * `tapedeck drift`: send a tape's calls to the live upstreams again and say how today's answers differ from the
 * recorded ones (see `compare.ts` for what is compared and how severe each change is). The plan is made, checked
 * (credentials) and shown (`onPreflight`) before anything is sent. `refresh` writes the fresh answers as a tape
 * through the store: the recorded exchanges in their order, each sent call's answer in place of the recorded one,
 * everything not sent as recorded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Agent } from 'undici';
import { copyBlob, createBodySpill, type BodySpill } from '../proxy/body-spill.js';
import { createDirStore } from '../tape/dir-store.js';
import { eventLines, readEvents } from '../tape/event-file.js';
import { STREAMED_BODY_BYTES } from '../tape/large-body.js';
import type { StoredEvents } from '../tape/schema.js';
import type { StoredBody, TapeWriter } from '../tape/store.js';
import { createScrubber, type Scrubber } from './scrub.js';
import { readStream, type StreamRead } from './stream-read.js';
import { TapedeckError } from '../errors.js';
import type { CostFn } from '../inspect/cost.js';
import { orderExchanges } from '../inspect/steps.js';
import type { SideEffectsFile } from '../replay/side-effects.js';
import type { RedactOptions } from '../tape/redact.js';
import type { Exchange, Route, SseEvent } from '../tape/schema.js';
import type { NewExchange, TapeStore } from '../tape/store.js';
import { compareCall, type CallSide } from './compare.js';
import { missingLine } from './credentials.js';
import { DEFAULT_THRESHOLDS, SEVERITIES, type Finding, type Severity, type Thresholds } from './finding.js';
import { hostOf, keysOf, planDrift, type DriftPlan, type PlannedCall, type SkippedCall } from './plan.js';
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
  /** `--allow-host HOST`: hosts a key may go to beside the provider's own API and the routes given (`key-hosts.ts`). */
  allowHosts?: readonly string[];
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
  const plan = planDrift(tape, {
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
  const scrub = createScrubber(keysOf(plan), opts.redact);
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
      report.refreshed = await writeRefreshed(opts, found.store, found.name, tape.header.routes, tape.exchanges, fresh, {
        source,
        scratch,
        scrub,
      });
  } finally {
    scratch.remove();
  }
  // Built from the scrubbed answers already; once more as a whole, as record would write it.
  return scrub.value(report);
}

/** Where a body or stream stored apart can be read from. */
interface Place {
  open(body: StoredBody): Readable;
}

/**
 * Where drift keeps the fresh answers too large to hold (bodies and streams over 16 MiB) until it has compared them
 * and, with `refresh`, written them to the refreshed tape: a folder of its own, removed when drift is done. Their
 * events are kept as they came; they are redacted when they go to a tape.
 */
function openScratch(): Place & { spill: BodySpill; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-drift-'));
  const store = createDirStore(dir);
  return {
    spill: createBodySpill(store, { name: 'fresh', eventLines }),
    open: (body) => store.openBlob('fresh', body),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
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

/** The refreshed tape: every recorded exchange in order, a sent call's fresh answer in its place. */
async function writeRefreshed(
  opts: DriftOptions,
  store: TapeStore,
  name: string,
  routes: readonly Route[],
  recorded: readonly Exchange[],
  fresh: ReadonlyMap<PlannedCall, Exchange>,
  parts: { source: Place; scratch: Place & { spill: BodySpill }; scrub: Scrubber },
): Promise<string> {
  const byId = new Map([...fresh].map(([call, ex]) => [call.exchange.id, { call, ex }] as const));
  const target = opts.refresh?.saveAs ?? name;
  const given = new Map((opts.routes ?? []).map((r) => [r.prefix, r.upstream] as const));
  // The server gave each MCP session a new id: the calls kept as recorded in it carry the new one too.
  const sessionIds = new Map<string, string>();
  for (const { call, ex } of byId.values())
    if (call.exchange.mcp?.sessionId !== undefined && ex.mcp?.sessionId !== undefined)
      sessionIds.set(call.exchange.mcp.sessionId, ex.mcp.sessionId);
  const ordered = orderExchanges(recorded);
  const written = ordered.map((ex) => byId.get(ex.id)?.ex ?? withSession(ex, sessionIds));
  // Where each large part is: a fresh answer's in the scratch folder, the rest in the tape's store; when the tape is
  // written over itself, its own are copied to the scratch folder first (opening the writer clears them).
  const home = new Map<string, () => Readable>();
  for (const { ex } of byId.values())
    for (const p of [ex.response?.body, ex.response?.eventsFile]) if (p?.kind === 'file') home.set(p.sha256, () => parts.scratch.open(p));
  if (target === name)
    for (const ex of written)
      for (const p of storedParts(ex))
        if (!home.has(p.sha256)) {
          const copy = await copyBlob(parts.source.open(p), parts.scratch.spill, p.encoding);
          home.set(p.sha256, () => parts.scratch.open(copy));
        }
  const writer = await store.openWriter({
    name: target,
    header: { mode: 'record', routes: routes.map((r) => ({ prefix: r.prefix, upstream: given.get(r.prefix) ?? r.upstream })) },
    ifExists: opts.refresh?.saveAs === undefined || opts.refresh.overwrite === true ? 'overwrite' : 'fail',
    ...(opts.redact ? { redact: opts.redact } : {}),
  });
  const from = (p: StoredBody): Readable => home.get(p.sha256)?.() ?? parts.source.open(p);
  try {
    for (const [i, ex] of written.entries()) {
      const { type: _t, id: _i, seq: _s, ...rest } = await withPartsIn(ex, store, writer, from, parts.scrub);
      await writer.append({ ...rest, offsetMs: ordered[i]?.offsetMs ?? ex.offsetMs } as NewExchange);
    }
  } finally {
    await writer.close();
  }
  if (writer.failure) throw writer.failure;
  return target;
}

/** The bodies and streams an exchange keeps apart from its line. */
function storedParts(ex: Exchange): StoredBody[] {
  const out: StoredBody[] = [];
  if (ex.request.body.kind === 'file') out.push(ex.request.body);
  if (ex.response?.body?.kind === 'file') out.push(ex.response.body);
  if (ex.response?.eventsFile) out.push(ex.response.eventsFile);
  return out;
}

/** `ex` with its large parts copied into the tape `writer` writes (as they stream; scrubbed; a stream's events redacted by the writer). */
async function withPartsIn(
  ex: Exchange,
  store: TapeStore,
  writer: TapeWriter,
  from: (p: StoredBody) => Readable,
  scrub: Scrubber,
): Promise<Exchange> {
  if (storedParts(ex).length === 0) return ex;
  const spill = createBodySpill(store, writer);
  const body = async (p: StoredBody): Promise<StoredBody> => {
    const sink = spill.sink();
    try {
      for await (const chunk of scrub.bytes(from(p))) sink.write(chunk);
    } catch (err) {
      sink.abort();
      throw err;
    }
    return sink.end(p.encoding);
  };
  const events = async (p: StoredEvents): Promise<StoredEvents> => {
    const lines = writer.eventLines;
    if (lines === undefined) throw new TapedeckError('INTERNAL', `the store of tape "${writer.name}" cannot keep a stream apart`);
    const sink = spill.sink();
    let batch: SseEvent[] = [];
    let n = 0;
    const flush = (): void => {
      if (batch.length > 0) sink.write(Buffer.from(lines(batch)));
      n += batch.length;
      batch = [];
    };
    try {
      for await (const ev of readEvents(from(p), p)) {
        batch.push(scrub.value(ev));
        if (batch.length >= 1000) flush();
      }
      flush();
    } catch (err) {
      sink.abort();
      throw err;
    }
    return { ...(await sink.end('text')), encoding: 'text', events: n };
  };
  const out: Exchange = { ...ex, request: { ...ex.request } };
  if (ex.request.body.kind === 'file') out.request.body = await body(ex.request.body);
  if (ex.response !== undefined) {
    out.response = { ...ex.response };
    if (ex.response.body?.kind === 'file') out.response.body = await body(ex.response.body);
    if (ex.response.eventsFile) out.response.eventsFile = await events(ex.response.eventsFile);
  }
  return out;
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
