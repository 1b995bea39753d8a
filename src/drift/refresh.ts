/**
 * `tapedeck drift --refresh`: the fresh answers written as a tape, through the store: every recorded exchange in its
 * order, a sent call's fresh answer in its place, everything not sent as recorded. Bodies and streams too large to hold
 * are copied into the refreshed tape as they stream (a stream's events redacted by its writer, every key drift sent
 * replaced), from where drift kept them: the scratch folder for fresh answers, the tape's store for the rest.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { TapedeckError } from '../errors.js';
import { orderExchanges } from '../inspect/steps.js';
import { copyBlob, createBodySpill, type BodySpill } from '../http/body-spill.js';
import { createDirStore } from '../tape/stores/dir-store.js';
import { eventLines, readEvents } from '../tape/event-file.js';
import type { RedactOptions } from '../tape/redaction/redact.js';
import type { Exchange, Route, SseEvent, StoredEvents } from '../tape/schema.js';
import type { StoredBody, TapeStore, TapeWriter } from '../tape/store.js';
import { createExchangeLog } from '../engine/exchange-log.js';
import { recordParts } from '../engine/record.js';
import { createTee } from '../engine/tee.js';
import { createLogger } from '../log.js';
import type { PlannedCall } from './plan.js';
import type { Scrubber } from './scrub.js';

/** Where a body or stream stored apart can be read from. */
export interface Place {
  open(body: StoredBody): Readable;
}

/**
 * Where drift keeps the fresh answers too large to hold (bodies and streams over 16 MiB) until it has compared them
 * and, with `refresh`, written them to the refreshed tape: a folder of its own, removed when drift is done. Their
 * events are kept as they came; they are redacted when they go to a tape.
 */
export function openScratch(): Place & { spill: BodySpill; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-drift-'));
  const store = createDirStore(dir);
  return {
    spill: createBodySpill(store, { name: 'fresh', eventLines }),
    open: (body) => store.openBlob('fresh', body),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The refreshed tape: every recorded exchange in order, a sent call's fresh answer in its place. */
export async function writeRefreshed(
  tape: { store: TapeStore; name: string; routes: readonly Route[]; recorded: readonly Exchange[] },
  fresh: ReadonlyMap<PlannedCall, Exchange>,
  opts: {
    saveAs?: string;
    overwrite?: boolean;
    routes?: readonly Route[];
    redact?: RedactOptions;
    /** What a store indexes each exchange by (`engine/tape-session.ts` indexKey under the config's key options). */
    indexKey?: (ex: Exchange) => string;
  },
  parts: { source: Place; scratch: Place & { spill: BodySpill }; scrub: Scrubber },
): Promise<string> {
  const { store, name, routes, recorded } = tape;
  const byId = new Map([...fresh].map(([call, ex]) => [call.exchange.id, { call, ex }] as const));
  const target = opts.saveAs ?? name;
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
    ifExists: opts.saveAs === undefined || opts.overwrite === true ? 'overwrite' : 'fail',
    ...(opts.redact ? { redact: opts.redact } : {}),
    ...(opts.indexKey ? { indexKey: opts.indexKey } : {}),
  });
  const from = (p: StoredBody): Readable => home.get(p.sha256)?.() ?? parts.source.open(p);
  // Every record goes on through a tee, as record writes (its meaning kept, not described again; already paired).
  const out = createExchangeLog(writer, createLogger('silent'), { pairLegacyStreams: false });
  try {
    for (const [i, ex] of written.entries()) {
      const { call, answer, extras, meaning } = recordParts(await withPartsIn(ex, store, writer, from, parts.scrub));
      const tee = createTee(out, { ...call, offsetMs: ordered[i]?.offsetMs ?? ex.offsetMs }, { ...extras, meaningOf: meaning });
      if (!(await tee.commit(answer)))
        throw writer.failure ?? new TapedeckError('TAPE_WRITE_FAILED', `could not write the refreshed tape "${target}"`);
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
