import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TapedeckError } from '../errors.js';
import { sideDir, tapeFile } from './paths.js';
import { acquireTapeLock, type TapeLock } from './lock.js';
import { createRedactor, type RedactOptions } from './redact.js';
import { createMarkerReplacer, highestMarker } from './secrets.js';
import { readTape } from './tape-reader.js';
import {
  TAPE_FORMAT_SESSIONS,
  TAPE_FORMAT_VERSION,
  TapeHeaderSchema,
  type Body,
  type EndLine,
  type Exchange,
  type TapeHeader,
  type WsFrame,
} from './schema.js';
import { serializeExchange } from './serialize.js';
import { VERSION } from '../version.js';

/** An exchange as the capture path builds it: the writer assigns `id`, `seq` and the `type` tag. */
export type NewExchange = Omit<Exchange, 'type' | 'id' | 'seq'>;

export interface TapeWriterOptions {
  dir: string;
  name: string;
  header: Omit<TapeHeader, 'type' | 'format' | 'tapedeck' | 'name' | 'createdAt'>;
  /** What to do when the tape exists: fail (default), overwrite it, or append to it. */
  ifExists?: 'fail' | 'overwrite' | 'append';
  redact?: RedactOptions;
  /** Bodies above this size (bytes of their JSON text) go to a side file. Default 1 MiB. */
  largeBodyBytes?: number;
  /** Called once, at the first failed write (disk full, I/O error); from then on every append rejects with it. */
  onFailure?: (err: TapedeckError) => void;
  /** File-system seam for tests: the writes that put lines on disk. Default: node:fs. */
  fs?: Partial<WriterFs>;
}

/** An exchange written while it is still open: see `TapeWriter.begin`. */
export interface OpenExchange {
  /** The exchange line as written (its id, seq, redacted headers). */
  readonly exchange: Exchange;
  /**
   * Append messages, redacted like bodies, large ones in side files. The messages added in one event-loop turn go
   * out as one `frames` line, after every line queued before it; resolves once that line is on disk.
   */
  addFrames(frames: readonly WsFrame[]): Promise<void>;
  /** Write the `end` line after every message added so far; nothing can be added after it. Resolves once it is on disk. */
  end(final: Omit<EndLine, 'type' | 'exchange'>): Promise<void>;
}

/** The few file operations the writer's line path uses (a seam so tests can make a write fail half-way). */
export interface WriterFs {
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number;
  ftruncateSync(fd: number, len: number): void;
}

export interface TapeWriter {
  readonly path: string;
  readonly name: string;
  readonly header: TapeHeader;
  /** Milliseconds since the tape's session started: the shared timeline for every exchange. */
  now(): number;
  /** Append one exchange; resolves once its line is written. Lines are written in call order, never interleaved. */
  append(ex: NewExchange): Promise<Exchange>;
  /**
   * Start an exchange that grows while it is open (a WebSocket session): its line is written now (and the tape
   * becomes format 2), its messages as they come (`addFrames`), its `end` line when it ends. The reader merges them.
   */
  begin(ex: NewExchange): Promise<OpenExchange>;
  /** Number of exchanges on disk: written completely (including ones from an appended-to tape); never a line that failed. */
  readonly count: number;
  /** The first write failure (`TAPE_WRITE_FAILED`, the OS error as `cause`), once the tape can no longer be written. */
  readonly failure: TapedeckError | undefined;
  /** Flush, sync, close the file and release the tape's lock. Never throws for a failed tape: see `failure`. */
  close(): Promise<void>;
}

/**
 * Append-only JSONL writer. Each exchange is one complete line; the lines of one event-loop turn go out in one
 * write right after it, from a single queue, so a `kill -9` leaves every completed exchange readable (at worst a
 * torn last line, which the reader skips) and concurrent clients never interleave bytes.
 */
export async function createTapeWriter(opts: TapeWriterOptions): Promise<TapeWriter> {
  const file = tapeFile(opts.dir, opts.name);
  const ifExists = opts.ifExists ?? 'fail';
  const redactor = createRedactor(opts.redact);
  const largeBodyBytes = opts.largeBodyBytes ?? 1024 * 1024;
  const fs: WriterFs = { writeSync, ftruncateSync, ...opts.fs };
  await mkdir(path.dirname(file), { recursive: true });

  // Refuse before touching anything: another writer may be appending to this very file.
  const exists = existsSync(file);
  if (exists && ifExists === 'fail') {
    throw new TapedeckError('TAPE_EXISTS', `tape "${opts.name}" already exists in ${opts.dir}`, {
      details: { tape: opts.name, dir: opts.dir },
    });
  }
  const lock = acquireTapeLock(file, opts.name);
  let fd: number | undefined;
  try {
    const opened = await openTape(file, opts, exists && ifExists === 'append', redactor.url);
    fd = opened.fd;
    return startWriter(opts, file, fd, lock, opened, redactor, largeBodyBytes, fs);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    lock.release();
    throw err;
  }
}

interface OpenedTape {
  fd: number;
  header: TapeHeader;
  seq: number;
  onDisk: number;
  startMs: number;
  /** Bytes of whole lines in the file. */
  offset: number;
  /** The first marker number this session may use (after the highest one already on an appended-to tape). */
  firstMarker: number;
}

async function openTape(file: string, opts: TapeWriterOptions, append: boolean, redactUrl: (u: string) => string): Promise<OpenedTape> {
  if (append) {
    const existing = await readTape(file);
    const header = existing.header;
    const fd = openSync(file, 'a+');
    let offset = fstatSync(fd).size;
    // A torn last line (a crash mid-write) must not swallow the first line appended after it.
    if (offset > 0 && !endsWithNewline(fd, offset)) offset += writeAllSync(fd, '\n', { writeSync, ftruncateSync });
    return {
      fd,
      header,
      seq: existing.exchanges.reduce((max, ex) => Math.max(max, ex.seq + 1), 0),
      onDisk: existing.exchanges.length,
      startMs: Date.parse(header.createdAt),
      offset,
      firstMarker: highestMarker(readFileSync(file, 'utf8')) + 1,
    };
  }
  if (existsSync(file)) rmSync(sideDir(file), { recursive: true, force: true });
  const createdAt = new Date();
  const header = TapeHeaderSchema.parse({
    type: 'header',
    format: TAPE_FORMAT_VERSION,
    tapedeck: VERSION,
    name: opts.name,
    createdAt: createdAt.toISOString(),
    ...opts.header,
    routes: opts.header.routes.map((r) => ({ prefix: r.prefix, upstream: redactUrl(r.upstream) })),
  });
  const fd = openSync(file, 'w');
  try {
    const offset = writeAllSync(fd, JSON.stringify(header) + '\n', { writeSync, ftruncateSync });
    return { fd, header, seq: 0, onDisk: 0, startMs: createdAt.getTime(), offset, firstMarker: 1 };
  } catch (err) {
    closeSync(fd);
    throw writeFailed(opts.name, file, (err as { cause?: unknown }).cause ?? err, 0);
  }
}

function startWriter(
  opts: TapeWriterOptions,
  file: string,
  fd: number,
  lock: TapeLock,
  opened: OpenedTape,
  redactor: ReturnType<typeof createRedactor>,
  largeBodyBytes: number,
  fs: WriterFs,
): TapeWriter {
  const { header, startMs } = opened;
  let { seq, onDisk, offset } = opened;
  const markers = createMarkerReplacer(opened.firstMarker);
  const perfStart = performance.now() - (Date.now() - startMs);

  let closed = false;
  let failure: TapedeckError | undefined;
  const fail = (err: unknown): TapedeckError => {
    if (failure === undefined) {
      failure = writeFailed(opts.name, file, err, onDisk);
      opts.onFailure?.(failure);
    }
    return failure;
  };

  // Group commit: the lines of one event-loop turn go out together in one write, after the turn (setImmediate).
  // Each line is complete before it is queued, so a crash can tear at most the last line.
  // The write is synchronous on purpose: appending a few KiB to the page cache costs ~1.5 µs of CPU, less than the
  // promise, thread-pool hand-off and wake-up of an fs/promises write (appends measured 14 µs instead of 17-22 µs).
  // A line is text, or made at flush time (a session's `frames` line collects the messages of the whole turn).
  let batch: (string | (() => string))[] = [];
  // `counts`: an exchange line (continuation lines of a session are not exchanges of their own).
  let batchWaiters: { resolve: () => void; reject: (err: unknown) => void; counts: boolean }[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  const flush = (): void => {
    scheduled = undefined;
    if (batch.length === 0) return;
    const lines = batch.map((l) => (typeof l === 'string' ? l : l()));
    const waiters = batchWaiters;
    batch = [];
    batchWaiters = [];
    if (failure !== undefined) {
      for (const w of waiters) w.reject(failure);
      return;
    }
    const bytes = Buffer.from(lines.length === 1 ? (lines[0] as string) : lines.join(''), 'utf8');
    let written = 0;
    try {
      written = writeBytes(fd, bytes, fs);
    } catch (err) {
      // Disk full or an I/O error, maybe after part of the batch: keep the lines that are whole on disk, cut the
      // torn one off so the file ends on a line boundary, and stop writing.
      const partial = err as TapedeckError;
      written = (partial.details?.written as number | undefined) ?? 0;
      let whole = 0;
      let end = 0;
      for (const line of lines) {
        const n = Buffer.byteLength(line, 'utf8');
        if (end + n > written) break;
        end += n;
        whole++;
      }
      let truncated = true;
      if (written > end) {
        try {
          fs.ftruncateSync(fd, offset + end);
        } catch {
          truncated = false;
        }
      }
      offset += end;
      onDisk += waiters.slice(0, whole).filter((w) => w.counts).length;
      const error = fail(partial.cause ?? err);
      if (!truncated) error.message += `; the last line on disk is torn (truncating it failed too)`;
      waiters.forEach((w, i) => (i < whole ? w.resolve() : w.reject(error)));
      return;
    }
    offset += written;
    for (const w of waiters) if (w.counts) onDisk++;
    for (const w of waiters) w.resolve();
  };
  const enqueueLine = (line: string | (() => string), counts = true): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      batch.push(line);
      batchWaiters.push({ resolve, reject, counts });
      scheduled ??= setImmediate(flush);
    });

  const externalize = async (body: Body | undefined): Promise<Body | undefined> => {
    if (body === undefined || body.kind === 'empty' || body.kind === 'file') return body;
    const [encoding, content] =
      body.kind === 'json'
        ? (['json', JSON.stringify(body.json)] as const)
        : body.kind === 'text'
          ? (['text', body.text] as const)
          : (['base64', body.base64] as const);
    if (content.length <= largeBodyBytes) return body;
    const bytes = encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const ext = encoding === 'json' ? 'json' : encoding === 'text' ? 'txt' : 'bin';
    const dir = sideDir(file);
    mkdirSync(dir, { recursive: true });
    const name = `${sha256}.${ext}`;
    await writeFile(path.join(dir, name), bytes);
    return { kind: 'file', file: `${path.basename(dir)}/${name}`, encoding, bytes: bytes.byteLength, sha256 };
  };

  const append = async (input: NewExchange): Promise<Exchange> => {
    if (failure !== undefined) throw failure;
    if (closed) throw new TapedeckError('TAPE_CLOSED', `tape "${opts.name}" is closed`);
    const mine = seq++;
    let ex = redactor.exchange({ ...input, type: 'exchange', id: String(mine).padStart(6, '0'), seq: mine } as Exchange);
    let line = serializeExchange(ex);
    // Secrets inside bodies, events and meanings: one cheap pass over the line; the walk only when it hits.
    if (redactor.secrets.mayHold(line)) {
      ex = redactor.secrets.redact(ex, markers);
      line = serializeExchange(ex);
    }
    if (line.length > largeBodyBytes) {
      // Something in it is large: bodies above the limit go to side files, whole (already redacted).
      try {
        ex = { ...ex, request: { ...ex.request, body: (await externalize(ex.request.body)) ?? { kind: 'empty' } } };
        if (ex.response?.body !== undefined) ex.response = { ...ex.response, body: await externalize(ex.response.body) };
      } catch (err) {
        throw fail(err);
      }
      line = serializeExchange(ex);
    }
    await enqueueLine(line + '\n');
    return ex;
  };

  // A tape with a session is format 2 (see TAPE_FORMAT_SESSIONS). The header line starts `{"type":"header","format":1,`
  // (the writer's own JSON.stringify): the digit changes in place, the line keeps its length, nothing else moves.
  const markSessions = (): void => {
    if (header.format === TAPE_FORMAT_SESSIONS) return;
    const patch = openSync(file, 'r+');
    try {
      const head = Buffer.alloc(256);
      const n = readSync(patch, head, 0, head.byteLength, 0);
      const at = head.subarray(0, n).indexOf(`"format":${TAPE_FORMAT_VERSION},`);
      if (at !== -1) writeSync(patch, String(TAPE_FORMAT_SESSIONS), at + '"format":'.length);
    } catch (err) {
      throw fail(err);
    } finally {
      closeSync(patch);
    }
    header.format = TAPE_FORMAT_SESSIONS;
  };

  const openExchange = (ex: Exchange): OpenExchange => {
    const id = ex.id;
    // Messages wait here until the turn's `frames` line is made (at flush); `line` is that line's promise.
    let collected: WsFrame[] = [];
    let line: Promise<void> | undefined;
    // Each call's messages are prepared (redacted, large ones to side files) in call order.
    let tail: Promise<unknown> = Promise.resolve();
    let ended = false;
    const prepare = async (frames: readonly WsFrame[]): Promise<WsFrame[]> => {
      let out = frames as WsFrame[];
      if (redactor.secrets.mayHold(JSON.stringify(out))) out = redactor.secrets.redact(out, markers);
      if (!out.some((f) => f.data !== undefined && f.data.kind !== 'empty' && f.data.kind !== 'file')) return out;
      const sized: WsFrame[] = [];
      for (const f of out) {
        const data = f.data === undefined ? undefined : await externalize(f.data);
        sized.push(data === f.data ? f : { ...f, ...(data ? { data } : {}) });
      }
      return sized;
    };
    const collect = (frames: readonly WsFrame[]): Promise<void> => {
      for (const f of frames) collected.push(f);
      line ??= enqueueLine(() => {
        const taken = collected;
        collected = [];
        line = undefined;
        return JSON.stringify({ type: 'frames', exchange: id, frames: taken }) + '\n';
      }, false);
      return line;
    };
    return {
      exchange: ex,
      addFrames(frames) {
        if (ended) return Promise.reject(new TapedeckError('TAPE_CLOSED', `session ${id} on tape "${opts.name}" has ended`));
        if (failure !== undefined) return Promise.reject(failure);
        // The chain waits for the messages to be collected, not written: those of one turn share a line.
        const queued = tail.then(async () => {
          if (failure !== undefined) throw failure;
          let ready: WsFrame[];
          try {
            ready = await prepare(frames);
          } catch (err) {
            throw fail(err);
          }
          return { written: collect(ready) };
        });
        tail = queued.catch(() => undefined);
        return queued.then((c) => c.written);
      },
      end(final) {
        if (ended) return Promise.resolve();
        ended = true;
        const done = tail.then(() => {
          if (failure !== undefined) throw failure;
          return enqueueLine(JSON.stringify({ type: 'end', exchange: id, ...final }) + '\n', false);
        });
        tail = done.catch(() => undefined);
        return done;
      },
    };
  };

  return {
    path: file,
    name: opts.name,
    header,
    get count() {
      return onDisk;
    },
    get failure() {
      return failure;
    },
    now: () => performance.now() - perfStart,
    append,
    async begin(input) {
      if (failure !== undefined) throw failure;
      if (closed) throw new TapedeckError('TAPE_CLOSED', `tape "${opts.name}" is closed`);
      markSessions();
      const first = input.websocket?.frames ?? [];
      const ex = await append({ ...input, websocket: { frames: [] } });
      const open = openExchange(ex);
      if (first.length > 0) void open.addFrames(first).catch(() => undefined);
      return open;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (scheduled !== undefined) clearImmediate(scheduled);
      flush();
      try {
        fsyncSync(fd);
      } catch {
        // a pipe or a filesystem without fsync: the data is written all the same
      }
      closeSync(fd);
      lock.release();
    },
  };
}

function writeFailed(name: string, file: string, err: unknown, onDisk: number): TapedeckError {
  const os = err as NodeJS.ErrnoException;
  const why =
    os.code !== undefined ? `${os.code}: ${os.message.replace(/^\w+: /, '').split(',')[0] ?? os.message}` : String(os.message ?? err);
  return new TapedeckError(
    'TAPE_WRITE_FAILED',
    `cannot write tape "${name}" (${file}): ${why}. It holds the ${onDisk} exchange(s) written before this; nothing more will be written`,
    { status: 503, cause: err, details: { errno: os.code, tape: name, onDisk } },
  );
}

function endsWithNewline(fd: number, size: number): boolean {
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] === 0x0a;
}

/** Write a whole string; returns its byte length (a regular file takes it in one call; the loop covers short writes). */
function writeAllSync(fd: number, text: string, fs: WriterFs): number {
  return writeBytes(fd, Buffer.from(text, 'utf8'), fs);
}

/** Write all of `bytes`. On an error, throws TAPE_WRITE_FAILED with `details.written`: the bytes that reached the file before it. */
function writeBytes(fd: number, bytes: Buffer, fs: WriterFs): number {
  let off = 0;
  while (off < bytes.byteLength) {
    try {
      off += fs.writeSync(fd, bytes, off, bytes.byteLength - off);
    } catch (err) {
      throw new TapedeckError('TAPE_WRITE_FAILED', `write failed after ${off} bytes`, { cause: err, details: { written: off } });
    }
  }
  return off;
}
