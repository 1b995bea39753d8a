/**
 * Bodies stored apart (`kind: "file"`: a large request or response body, a WebSocket message, a stream's events in
 * `response.eventsFile`), brought back into a tape's exchanges as it is read, or left in the store for whoever
 * serves them to read as a stream. Every store reads a tape through here, with its own way to reach its side files
 * (`SideFileAccess`): a folder's `NAME.files/`, the memory store's map, PostgreSQL's blob tables.
 *
 * A side file that cannot be used (missing, another size, bytes that are not the recorded ones, a path out of the
 * tape's folder, a stream file whose lines are not its events) leaves its exchange out, reported in `problems`, so it
 * is never served. One left in the store is checked as cheaply as it can be now (there, at its size) and in full as
 * it is read (`verifiedBlobStream`, `readEvents`): a damaged one is cut before its end, never served whole.
 */
import type { Readable } from 'node:stream';
import { TapedeckError } from '../errors.js';
import { inlineBody } from './exchange-encoder.js';
import { parseEvents, readEvents } from './event-file.js';
import { STREAMED_BODY_BYTES } from './large-body.js';
import type { Body, Exchange } from './schema.js';
import type { ReadTapeOptions, StoredBody, TapeProblem } from './store.js';

/** How one store reaches the side files of a tape being read. */
export interface SideFileAccess {
  /** The bytes, whole, checked against their recorded size and sha256 (TAPE_CORRUPT otherwise). */
  read: (body: StoredBody) => Promise<Buffer>;
  /** The bytes as a stream, checked as they pass (`verifiedBlobStream`). */
  open: (body: StoredBody) => Readable;
  /** That the bytes are there at their recorded size, without reading them (TAPE_CORRUPT otherwise). */
  check: (body: StoredBody) => Promise<void>;
}

/** What stays in the store, and how it is checked, for one read of a tape. */
interface Plan {
  files: SideFileAccess;
  /** Bodies above this size stay references (undefined: every body is read in). */
  above: number | undefined;
  /** Streams above this size stay references. */
  eventsAbove: number;
  answersApart: boolean;
}

/**
 * Bring stored bodies back into their exchanges (in place), and the events of streams stored apart into `events`,
 * as `opts` says (`ReadTapeOptions.inlineUpTo`, `answersApart`); the exchanges whose side files can be used are
 * returned, the others reported in `problems`.
 */
export async function resolveStoredBodies(
  exchanges: Exchange[],
  problems: TapeProblem[],
  files: SideFileAccess,
  opts: Pick<ReadTapeOptions, 'inlineUpTo' | 'answersApart'> = {},
): Promise<Exchange[]> {
  const plan: Plan = {
    files,
    above: opts.inlineUpTo,
    eventsAbove: opts.inlineUpTo ?? STREAMED_BODY_BYTES,
    answersApart: opts.answersApart === true,
  };
  const kept: Exchange[] = [];
  for (const ex of exchanges) {
    const at = { file: '?' };
    try {
      await resolveExchange(ex, plan, at);
      kept.push(ex);
    } catch (err) {
      problems.push({
        line: 0,
        message: `exchange ${ex.id}: side file ${at.file} is corrupt or unreadable (${err instanceof TapedeckError ? err.message : (err as Error).message}); exchange skipped`,
      });
    }
  }
  return kept;
}

/** One exchange's stored bodies, resolved or checked; `at.file` names the one being read, for the problem. */
async function resolveExchange(ex: Exchange, plan: Plan, at: { file: string }): Promise<void> {
  const { files } = plan;
  // An answer read only when it is served: HTTP answers of a replay (an MCP answer's messages are read by its replay).
  const answerApart = plan.answersApart && ex.mcp === undefined && ex.transport === 'http';
  if (ex.request.body.kind === 'file') {
    at.file = ex.request.body.file;
    ex.request.body = await resolveOrLeave(ex.request.body, plan, false);
  }
  const res = ex.response;
  if (res?.body?.kind === 'file') {
    at.file = res.body.file;
    res.body = await resolveOrLeave(res.body, plan, answerApart);
  }
  const stream = res?.eventsFile;
  if (res !== undefined && stream !== undefined) {
    at.file = stream.file;
    if (!answerApart && stream.bytes <= plan.eventsAbove) {
      res.events = parseEvents(await files.read(stream), stream);
      delete res.eventsFile;
    } else if (plan.answersApart) await files.check(stream);
    // Left in the store for the replayer to stream; every line read now (as a stream), so none fails mid-answer.
    else for await (const ev of readEvents(files.open(stream), stream)) void ev;
  }
  for (const f of ex.websocket?.frames ?? []) {
    if (f.data?.kind !== 'file') continue;
    at.file = f.data.file;
    f.data = inlineBody(f.data, await files.read(f.data));
  }
}

/**
 * A body read in, or left a reference: an answer served later (`apart`), or one above the size a reader holds. A
 * replay checks what it leaves only to be there at its size (its bytes are checked as they are served); any other
 * reader reads it through once, so that a damaged one is never used.
 */
async function resolveOrLeave(body: StoredBody, plan: Plan, apart: boolean): Promise<Body> {
  if (!apart && (plan.above === undefined || body.bytes <= plan.above)) return inlineBody(body, await plan.files.read(body));
  if (plan.answersApart) await plan.files.check(body);
  else for await (const chunk of plan.files.open(body)) void chunk;
  return body;
}
