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
import { TapedeckError } from '../../errors.js';
import { sideDir, tapeFile } from '../paths.js';
import { acquireTapeLock, type TapeLock } from './lock.js';
import { newTapeHeader, storedBody } from '../exchange-encoder.js';
import { createTapeWriterCore, type ClaimedTape, type WriterSink } from './writer-core.js';
import { PartlyPersisted } from './group-commit.js';
import { highestMarker } from '../redaction/secrets.js';
import { readTape } from '../tape-reader.js';
import type { TapeHeader } from '../schema.js';
import type { TapeWriter, WriterOptions } from '../store.js';

export type { NewExchange, TapeWriter } from '../store.js';

/** The folder store's writer: a `WriterOptions` plus the folder, and a file-system seam for tests. */
export interface TapeWriterOptions extends WriterOptions {
  dir: string;
  /** File-system seam for tests: the writes that put lines on disk. Default: node:fs. */
  fs?: Partial<WriterFs>;
}

/** The few file operations the writer's line path uses (a seam so tests can make a write fail half-way). */
export interface WriterFs {
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number;
  ftruncateSync(fd: number, len: number): void;
}

/**
 * The folder store's writer: an append-only JSONL file under the tape's lock, written by the one writer core
 * (`writer-core.ts`). Each exchange is one complete line; the lines of one event-loop turn go out in one write right
 * after it, so a `kill -9` leaves every completed exchange readable (at worst a torn last line, which the reader
 * skips) and concurrent clients never interleave bytes.
 */
export async function createTapeWriter(opts: TapeWriterOptions): Promise<TapeWriter> {
  const file = tapeFile(opts.dir, opts.name);
  const ifExists = opts.ifExists ?? 'fail';
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
    const opened = await openTape(file, opts, exists && ifExists === 'append');
    fd = opened.fd;
    return startWriter(opts, file, fd, lock, opened, fs);
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
  append: boolean;
}

async function openTape(file: string, opts: TapeWriterOptions, append: boolean): Promise<OpenedTape> {
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
      append: true,
    };
  }
  if (existsSync(file)) rmSync(sideDir(file), { recursive: true, force: true });
  const header = newTapeHeader(opts.name, opts.header, opts.redact);
  const fd = openSync(file, 'w');
  try {
    const offset = writeAllSync(fd, JSON.stringify(header) + '\n', { writeSync, ftruncateSync });
    return { fd, header, seq: 0, onDisk: 0, startMs: Date.parse(header.createdAt), offset, firstMarker: 1, append: false };
  } catch (err) {
    closeSync(fd);
    throw writeFailed(opts.name, file, (err as { cause?: unknown }).cause ?? err, 0);
  }
}

/** The folder's sink (`writer-core.ts`): lines appended to the tape's file, large bodies to its side folder. */
function startWriter(opts: TapeWriterOptions, file: string, fd: number, lock: TapeLock, opened: OpenedTape, fs: WriterFs): TapeWriter {
  const { header } = opened;
  let { offset } = opened;
  const sink: WriterSink = {
    path: file,
    putBlob: (bytes, encoding) => writeSideFile(file, opts.name, bytes, encoding),
    // The lines of one commit go out in one write, synchronous on purpose: appending a few KiB to the page cache costs
    // ~1.5 µs of CPU, less than the promise, thread-pool hand-off and wake-up of an fs/promises write.
    persist(records) {
      // Each line and its newline straight into one buffer: no joined string, no line copied to append its newline.
      const sizes = records.map((r) => Buffer.byteLength(r.line, 'utf8') + 1);
      const bytes = Buffer.allocUnsafe(sizes.reduce((a, b) => a + b, 0));
      let at = 0;
      records.forEach((r, i) => {
        bytes.write(r.line, at, 'utf8');
        at += sizes[i] as number;
        bytes[at - 1] = 0x0a;
      });
      try {
        offset += writeBytes(fd, bytes, fs);
      } catch (err) {
        // Disk full or an I/O error, maybe after part of the batch: keep the lines that are whole on disk, cut the
        // torn one off so the file ends on a line boundary; the core stops writing.
        const partial = err as TapedeckError;
        const written = (partial.details?.written as number | undefined) ?? 0;
        let whole = 0;
        let end = 0;
        for (const n of sizes) {
          if (end + n > written) break;
          end += n;
          whole++;
        }
        let note: string | undefined;
        if (written > end) {
          try {
            fs.ftruncateSync(fd, offset + end);
          } catch {
            note = 'the last line on disk is torn (truncating it failed too)';
          }
        }
        offset += end;
        throw new PartlyPersisted(whole, partial.cause ?? err, note);
      }
    },
    // A tape with a session is format 2, one with a stream stored apart format 3. Its header line starts
    // `{"type":"header","format":1,` (JSON.stringify of the schema's order): that digit changes in place, the line
    // keeps its length, nothing moves.
    markFormat(format) {
      let patch: number | undefined;
      try {
        patch = openSync(file, 'r+');
        const head = Buffer.alloc(256);
        const n = readSync(patch, head, 0, head.byteLength, 0);
        const at = head.subarray(0, n).indexOf(`"format":${header.format},`);
        if (at !== -1) writeSync(patch, String(format), at + '"format":'.length);
      } finally {
        if (patch !== undefined) closeSync(patch);
      }
    },
    failure: (err, stored) => writeFailed(opts.name, file, err, stored),
    async release({ discard }) {
      try {
        fsyncSync(fd);
      } catch {
        // a pipe or a filesystem without fsync: the data is written all the same
      }
      closeSync(fd);
      if (discard) {
        rmSync(file, { force: true });
        rmSync(sideDir(file), { recursive: true, force: true });
      }
      lock.release();
    },
  };
  const claimed: ClaimedTape = {
    header,
    seq: opened.seq,
    pos: 0,
    count: opened.onDisk,
    firstMarker: opened.firstMarker,
    append: opened.append,
  };
  return createTapeWriterCore(opts, claimed, sink).writer;
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

/** Write one large body to the tape's side folder (`<tape>.files/<sha256>.<ext>`); the name is its content's hash. */
async function writeSideFile(file: string, name: string, bytes: Buffer, encoding: 'json' | 'text' | 'base64') {
  const body = storedBody(name, bytes, encoding);
  const dir = sideDir(file);
  mkdirSync(dir, { recursive: true });
  try {
    await writeFile(path.join(dir, path.basename(body.file)), bytes);
  } catch (err) {
    throw new TapedeckError('TAPE_WRITE_FAILED', `cannot write side file ${body.file}`, { cause: err });
  }
  return body;
}
