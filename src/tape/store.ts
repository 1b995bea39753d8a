/**
 * The tape store seam: everything a tape needs, behind one interface, so a tape can live in a folder of JSONL files
 * (the default, `dir-store.ts`), in memory (tests, `memory-store.ts`) or in PostgreSQL shared by a team or a fleet
 * (`postgres/`). Every command, the proxy, the viewer and the experiment runner reach tapes through a `TapeStore`;
 * nothing above this layer knows which one it has.
 *
 * The promises every store keeps (the contract suite in `test/tape/store-contract.ts` checks them on all three):
 * - one writer per tape, refused with the holder named (`TAPE_LOCKED`); a crashed writer's claim goes with it;
 * - an appended exchange is durable when `append` resolves (the proxy answers the client's last byte after it);
 * - the exchanges of one event-loop turn are committed together (group commit);
 * - a tape reads back as written: header, then exchanges in `seq` order, unreadable records reported, never fatal;
 * - `remove` never deletes a tape being written;
 * - large bodies are content-addressed (sha256) and verified when read.
 */
import type { Readable } from 'node:stream';
import type { TapedeckError } from '../errors.js';
import type { RedactOptions } from './redaction/redact.js';
import type { Body, EndLine, Exchange, ResponseRecord, SseEvent, TapeHeader, WsFrame } from './schema.js';
import type { TapeStats } from './stats.js';

/**
 * The text a part of an exchange already has as JSON (the bytes a JSON body came as, a recorded answer's line text),
 * tied to the very object it is the text of: the writer uses it instead of stringifying that part again, and only
 * while the part is that object (a part that was copied or changed, a body redacted or stored apart, is stringified).
 */
export interface WireText<T> {
  of: T;
  text: string;
  /**
   * What the secret prefilter said of `text`, the last time a writer scanned it (its detector, and whether it may hold
   * a secret): a recorded answer served again is scanned once, not once per serving.
   */
  scanned?: { by: unknown; hit: boolean };
}

/** What parts of an exchange already have as text (see `WireText`). Never written as such. */
export interface WireTexts {
  requestBody?: WireText<Body> | undefined;
  responseBody?: WireText<Body> | undefined;
  response?: WireText<ResponseRecord> | undefined;
}

/**
 * An exchange as the capture path builds it: the writer assigns `id`, `seq` and the `type` tag. `wire`: the text its
 * parts came as, when the caller has it.
 */
export type NewExchange = Omit<Exchange, 'type' | 'id' | 'seq'> & { wire?: WireTexts | undefined };

/** A large body stored apart from its exchange (a side file, a blob row). */
export type StoredBody = Extract<Body, { kind: 'file' }>;

/** A record the reader could not use: reported, skipped, never fatal. `line` is the record's 1-based position. */
export interface TapeProblem {
  line: number;
  message: string;
}

export interface LoadedTape {
  /** Where the tape is, for messages: its file, or `<store>#<name>`. */
  path: string;
  name: string;
  header: TapeHeader;
  exchanges: Exchange[];
  problems: TapeProblem[];
}

export interface ReadTapeOptions {
  /** Load large (side-file / blob) bodies into memory (default true): replay needs them, listing does not. */
  resolveFiles?: boolean;
  /**
   * With `resolveFiles`: bodies stored apart that are larger than this many bytes are checked (size and sha256, read
   * as a stream) but left as references, for replay to stream them with `openBlob`. Default: every body is loaded.
   *
   * Streams stored apart (`response.eventsFile`) are read into `events` when their side file is no larger than this
   * (default 16 MiB, `STREAMED_BODY_BYTES`: a stream is stored apart only above that, so by default none is); a larger
   * one stays a reference, every line checked, for whoever needs its events to read them from the store event by
   * event (`tape/event-file.ts`). A stream is never held whole by reading a tape.
   */
  inlineUpTo?: number;
  /**
   * With `resolveFiles`: every answer stored apart (a response body or a stream's events, whatever its size) stays in
   * the store, checked only to be there at its recorded size, and is read when it is served (`openBlob`, its bytes
   * checked as they pass): what a replay holds, and how long it takes to start, do not grow with its recordings'
   * answers. Request bodies (the matcher reads them), MCP answers (the MCP replay reads their messages) and WebSocket
   * messages are read as without it.
   */
  answersApart?: boolean;
}

export interface WriterOptions {
  name: string;
  header: Omit<TapeHeader, 'type' | 'format' | 'tapedeck' | 'name' | 'createdAt'>;
  /** What to do when the tape exists: fail (default), overwrite it, or append to it. */
  ifExists?: 'fail' | 'overwrite' | 'append';
  redact?: RedactOptions;
  /** Bodies above this size (bytes of their JSON text) are stored apart, content-addressed. Default 1 MiB. */
  largeBodyBytes?: number;
  /** Called once, at the first failed write (disk full, I/O error, the database gone); then every append rejects. */
  onFailure?: (err: TapedeckError) => void;
  /** On close, a tape that holds no exchange is removed (a replay nobody called leaves no clutter). */
  discardIfEmpty?: boolean;
  /**
   * The exact-match key of an exchange, for stores that index exchanges (PostgreSQL keeps it in an indexed column,
   * to find the recordings of a request across tapes). Asked once per exchange, after redaction; folder and memory
   * stores do not ask.
   */
  indexKey?: (ex: Exchange) => string | undefined;
}

export interface TapeWriter {
  /** Where the tape is, for messages: its file, or `<store>#<name>`. */
  readonly path: string;
  readonly name: string;
  readonly header: TapeHeader;
  /** Milliseconds since the tape's session started: the shared timeline for every exchange. */
  now(): number;
  /** Append one exchange; resolves once it is durable. Exchanges are stored in call order, never interleaved. */
  append(ex: NewExchange): Promise<Exchange>;
  /**
   * Start an exchange that grows while it is open (a WebSocket session): its record is stored now (the tape becomes
   * format 2), its messages as they come, its end when it ends, each a record of its own (`frames`, `end`) that
   * `parseTapeRecords` merges into the exchange.
   */
  begin(ex: NewExchange): Promise<OpenExchange>;
  /**
   * The side-file lines of a stream too large for its exchange's line (`response.eventsFile`, `event-file.ts`), redacted
   * as this tape's lines are, with the same markers. An exchange appended with `eventsFile` makes the tape format 3.
   */
  eventLines(events: readonly SseEvent[]): string;
  /** Exchanges stored (including those of an appended-to tape); never one that failed. */
  readonly count: number;
  /** The first write failure (`TAPE_WRITE_FAILED`, the cause attached), once the tape can no longer be written. */
  readonly failure: TapedeckError | undefined;
  /**
   * Flush, make durable, release the tape. Never throws for a failed tape: see `failure`. `withinMs`: a stop's
   * remaining time; a store that cannot confirm what is pending by then (a database that stopped answering) fails
   * the tape with it rather than hold the stop (stores whose writes cannot hang ignore it).
   */
  close(opts?: { withinMs?: number }): Promise<void>;
}

/** An exchange being written while it is open: see `TapeWriter.begin` (`open-exchange.ts` implements it over any store). */
export interface OpenExchange {
  /** The exchange record as stored (its id, seq, redacted headers). */
  readonly exchange: Exchange;
  /**
   * Add messages, redacted like bodies, large ones stored apart. The messages added in one event-loop turn are one
   * `frames` record, stored after every record queued before it; resolves once it is durable.
   */
  addFrames(frames: readonly WsFrame[]): Promise<void>;
  /** Store the `end` record after every message added so far; nothing can be added after it. Resolves once durable. */
  end(final: Omit<EndLine, 'type' | 'exchange'>): Promise<void>;
}

/** Which tapes `list` returns. Every filter narrows; none given: every tape. */
export interface TapeQuery {
  /** Names starting with this. */
  prefix?: string;
  mode?: 'record' | 'replay';
  /** Tapes with at least one LLM call on this model (as recorded, e.g. `gpt-4.1-mini`). */
  model?: string;
  /** Tapes that called this tool (an MCP `tools/call`, or a tool call the model asked for). */
  tool?: string;
  /** Created at or after this time. */
  since?: Date;
  /** Page size (default: all). */
  limit?: number;
  /** The `next` of the previous page. */
  after?: string;
}

/** One row of a listing: the tape's header and running totals, or why it could not be read. */
export type TapeListEntry =
  | { ok: true; name: string; header: TapeHeader; stats: TapeStats; problems: TapeProblem[]; modifiedAt: string }
  | { ok: false; name: string; error: string; modifiedAt?: string };

export interface TapePage {
  tapes: TapeListEntry[];
  /** Pass as `after` for the next page; absent on the last page. */
  next?: string;
}

export interface ResolvedTape {
  /** The store that holds it (a path reference in a folder store names another folder). */
  store: TapeStore;
  name: string;
  /** How the reference was read. */
  by: 'path' | 'name' | 'latest' | 'prefix';
}

export interface ResolveOptions {
  /** `latest` may be a replay tape too. */
  includeReplays?: boolean;
}

export interface RemovedTape {
  name: string;
  /** Where it was, for messages. */
  path: string;
  /** True when large bodies stored for it were removed with it. */
  sideFiles: boolean;
}

/**
 * One stored record of a tape being copied, its text exactly as the source holds it: an exchange (`ex`), or a
 * continuation record of one (a session's `frames` or `end`: no `ex`); `stored`: the large bodies it refers to.
 */
export interface TapeRecordCopy {
  ex?: Exchange;
  line: string;
  stored: StoredBody[];
}

/** A whole tape to write as it is (push and pull between stores): header and records kept exactly. */
export interface TapeImport {
  /** The name to store it under. */
  name: string;
  header: TapeHeader;
  /** The header's record text as the source holds it. */
  headerLine: string;
  records: AsyncIterable<TapeRecordCopy>;
  /** The bytes of a large body the records refer to, from the source store. */
  readBlob(body: StoredBody): Promise<Buffer>;
}

export interface ImportOptions {
  overwrite?: boolean;
  /** As for a writer: the exact-match key a store that indexes exchanges keeps. */
  indexKey?: (ex: Exchange) => string | undefined;
}

/** A sink for one large body, fed as it streams: bounded memory whatever its size. */
export interface BlobSink {
  write(chunk: Uint8Array): void;
  /** Store what was written; resolves to the body that refers to it. */
  end(encoding: StoredBody['encoding']): Promise<StoredBody>;
  /** Throw away what was written (the exchange failed). */
  abort(): void;
}

export interface TapeStore {
  readonly kind: 'dir' | 'memory' | 'postgres';
  /** Where the tapes are, for messages: a folder, `memory`, or a database URL without its password. */
  readonly location: string;
  /** Where a tape is, for messages: its file in a folder store, `<location>#<name>` elsewhere. */
  where(name: string): string;
  /** Open the one writer of a tape (TAPE_LOCKED while another holds it; TAPE_EXISTS per `ifExists`). */
  openWriter(opts: WriterOptions): Promise<TapeWriter>;
  /**
   * Write a whole tape as it is, all or nothing (TAPE_EXISTS unless `overwrite`; TAPE_LOCKED while a writer holds
   * it). Resolves to the number of exchanges written. What `push` and `pull` use.
   */
  importTape(tape: TapeImport, opts?: ImportOptions): Promise<number>;
  /** Whether a tape of this name exists. */
  has(name: string): Promise<boolean>;
  /**
   * Who is writing the tape now (`pid 4242 (since ...)`, a database connection, this process), undefined when no
   * writer holds it: a tape being recorded is not replayed, it is incomplete.
   */
  writing(name: string): Promise<string | undefined>;
  /** The header alone (TAPE_NOT_FOUND, TAPE_CORRUPT, TAPE_FORMAT_UNSUPPORTED). */
  header(name: string): Promise<TapeHeader>;
  /** A whole tape: header, exchanges in order, problems. */
  load(name: string, opts?: ReadTapeOptions): Promise<LoadedTape>;
  /** The tape's records as stored text with their 1-based positions (header first): what `scan` reads. */
  lines(name: string): AsyncIterable<{ line: number; text: string }>;
  /** Tapes by name, filtered and paged. */
  list(query?: TapeQuery): Promise<TapePage>;
  /** Every tape name, sorted. */
  names(): Promise<string[]>;
  /** A reference: a name, `latest`, `latest-replay`, a unique prefix (and, for a folder, a path to a `.jsonl`). */
  resolve(ref: string, opts?: ResolveOptions): Promise<ResolvedTape>;
  /** Tapes whose header says they replay `name`. */
  replaysOf(name: string): Promise<string[]>;
  /** Delete a tape and its large bodies; never one being written (TAPE_LOCKED naming the writer). */
  remove(name: string): Promise<RemovedTape>;
  /** The bytes of a large body stored for tape `name`, checked against its size and sha256 (TAPE_CORRUPT otherwise). */
  readBlob(name: string, body: StoredBody): Promise<Buffer>;
  /**
   * The bytes of a large body as a stream (bounded memory, whatever its size), checked against its size and sha256
   * as they pass (the stream fails with TAPE_CORRUPT at its end otherwise).
   */
  openBlob(name: string, body: StoredBody): Readable;
  /** Start a large body for tape `name`, fed as it streams. */
  blobSink(name: string): BlobSink;
  /**
   * Follow a tape: `onChange` is called soon after each change to it (an exchange committed, the tape removed),
   * from any writer, on any machine the store is shared with. Returns the function that stops following.
   */
  watch(name: string, onChange: () => void): () => void;
  /** A token that changes whenever the tape changes (undefined: no such tape): the viewer's cache key. */
  version(name: string): Promise<string | undefined>;
  /** Release connections and timers. */
  close(): Promise<void>;
}
