/**
 * Reading tapes: the record parser every store shares (a header, then exchanges; a record that cannot be used is
 * reported with its position and skipped, never fatal), and the folder store's file reading on top of it.
 */
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { TapedeckError } from '../errors.js';
import { VERSION } from '../version.js';
import { resolveSideFile, sideDir, tapeFile, TAPE_EXT } from './paths.js';
import { ExchangeSchema, TAPE_FORMATS_READ, TapeHeaderSchema, type Exchange, type TapeHeader } from './schema.js';
import { isPartLine, mergeSessionLines, type PartLine } from './session-lines.js';
import { contentInUnknownField, lostContentMessage, unknownFields, unknownFieldsTally } from './unknown-fields.js';
import { blobMismatch } from './exchange-encoder.js';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from './json-depth.js';
import { verifiedBlobStream } from './large-body.js';
import { resolveStoredBodies, type SideFileAccess } from './stored-bodies.js';
import type { LoadedTape, ReadTapeOptions, StoredBody, TapeProblem } from './store.js';

export type { LoadedTape, ReadTapeOptions, TapeProblem } from './store.js';

/** One stored record: its 1-based position and its JSON text. */
export interface TapeRecord {
  line: number;
  text: string;
}

export interface ParsedTape {
  header: TapeHeader;
  exchanges: Exchange[];
  problems: TapeProblem[];
}

/**
 * Parse a tape's records: the first is the header (missing or invalid: TAPE_CORRUPT; another format:
 * TAPE_FORMAT_UNSUPPORTED), the rest exchanges. A record that is not JSON or not an exchange is reported in
 * `problems` and skipped. `tornLast`: the last record is cut short (a crash mid-write), say so when it does not parse.
 */
/** How deep the record around a body goes (`{"request":{"body":{"json":...}}}` and the like). */
const LINE_DEPTH = 8;

export function parseTapeRecords(where: string, records: Iterable<TapeRecord>, opts: { tornLast?: boolean } = {}): ParsedTape {
  const problems: TapeProblem[] = [];
  let header: TapeHeader | undefined;
  const exchanges: Exchange[] = [];
  // Continuation records of sessions (`frames`, `end`), merged into their exchanges once all are read.
  const parts: PartLine[] = [];
  // Fields this tapedeck does not know (a newer one wrote them): ignored, named once for the tape.
  const unknown = unknownFieldsTally();
  const all = [...records];
  for (let i = 0; i < all.length; i++) {
    const { line, text } = all[i] as TapeRecord;
    if (text.trim() === '') continue;
    // A record nested too deeply to walk (a body thousands of levels deep, written by hand or by an older tapedeck)
    // is skipped like any record that cannot be read: everything after it would overflow on it.
    if (exceedsJsonDepth(text, MAX_JSON_DEPTH + LINE_DEPTH)) {
      problems.push({ line, message: `nested deeper than ${MAX_JSON_DEPTH} levels, too deep to read; skipped` });
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      problems.push({
        line,
        message:
          opts.tornLast === true && i === all.length - 1
            ? 'torn last line (the recorder stopped mid-write); skipped'
            : 'not valid JSON; skipped',
      });
      continue;
    }
    if (header === undefined) {
      header = parseHeader(where, value, line);
      unknown.note(line, unknownFields(value, header));
      continue;
    }
    if (isPartLine(value)) {
      parts.push({ line, value });
      continue;
    }
    const ex = ExchangeSchema.safeParse(value);
    if (!ex.success) {
      const issue = ex.error.issues[0];
      problems.push({
        line,
        message: `not a valid exchange (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}); skipped`,
      });
      continue;
    }
    const fields = unknownFields(value, ex.data);
    if (fields.length > 0 && contentInUnknownField(ex.data, fields)) {
      problems.push({ line, message: lostContentMessage(fields) });
      continue;
    }
    unknown.note(line, fields);
    exchanges.push(ex.data);
  }
  if (header === undefined) throw new TapedeckError('TAPE_CORRUPT', `${where}: empty tape (no header line)`, { status: 500 });
  if (parts.length > 0 || exchanges.some((ex) => ex.websocket !== undefined)) mergeSessionLines(exchanges, parts, problems, unknown);
  const ignored = unknown.problem(header.tapedeck);
  if (ignored !== undefined) problems.push(ignored);
  return { header, exchanges, problems };
}

/** A header record, checked: another format version says which tapedeck wrote it; anything else invalid is TAPE_CORRUPT. */
export function parseHeader(where: string, value: unknown, line = 1): TapeHeader {
  checkFormat(where, value);
  const h = TapeHeaderSchema.safeParse(value);
  if (!h.success)
    throw new TapedeckError('TAPE_CORRUPT', `${where}: line ${line} is not a tape header (${h.error.issues[0]?.message ?? 'invalid'})`, {
      status: 500,
    });
  return h.data;
}

/**
 * Read a tape file. A torn last line (a crash mid-write) and corrupt lines are reported in `problems` and skipped;
 * only a missing file or a missing/invalid header is an error.
 */
export async function readTape(file: string, opts: ReadTapeOptions = {}): Promise<LoadedTape> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new TapedeckError('TAPE_NOT_FOUND', `no tape at ${file}`, { status: 404 });
    throw err;
  }
  const { header, exchanges, problems } = parseTapeRecords(file, linesOf(text), { tornLast: !text.endsWith('\n') });
  const usable = opts.resolveFiles !== false ? await resolveStoredBodies(exchanges, problems, sideFiles(file), opts) : exchanges;
  return { path: file, name: header.name, header, exchanges: usable, problems };
}

/**
 * The records of a tape file's text: its lines, numbered from 1 (a final newline ends the last one). A UTF-8 byte
 * order mark before the first line (an editor's) is not part of it.
 */
export function* linesOf(text: string): Generator<TapeRecord> {
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    if (end === -1) {
      yield { line, text: text.slice(start) };
      return;
    }
    yield { line: line++, text: text.slice(start, end) };
    start = end + 1;
  }
}

/** A tape file's header alone, from its first line (the file is not read further). */
export function readTapeHeader(file: string): TapeHeader {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new TapedeckError('TAPE_NOT_FOUND', `no tape at ${file}`, { status: 404 });
    throw err;
  }
  try {
    const chunks: Buffer[] = [];
    const buf = Buffer.alloc(16 * 1024);
    for (let pos = 0; ;) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      const nl = buf.subarray(0, n).indexOf(0x0a);
      chunks.push(Buffer.from(buf.subarray(0, nl === -1 ? n : nl)));
      if (nl !== -1) break;
      pos += n;
    }
    const first = Buffer.concat(chunks)
      .toString('utf8')
      .replace(/^\uFEFF/, '');
    if (first.trim() === '') {
      // A tape whose first line is blank: the full reader knows where its header is.
      throw new TapedeckError('TAPE_CORRUPT', `${file}: line 1 is not a tape header (empty)`, { status: 500 });
    }
    let value: unknown;
    try {
      value = JSON.parse(first);
    } catch {
      throw new TapedeckError('TAPE_CORRUPT', `${file}: line 1 is not a tape header (not valid JSON)`, { status: 500 });
    }
    return parseHeader(file, value);
  } finally {
    closeSync(fd);
  }
}

export async function loadTape(dir: string, name: string, opts?: ReadTapeOptions): Promise<LoadedTape> {
  return readTape(tapeFile(dir, name), opts);
}

/**
 * Names of every tape under `dir` (recursively), sorted. Only regular files and folders count: a symbolic link is
 * never followed out of the folder.
 */
export async function listTapeNames(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (sub: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(path.join(dir, sub), { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const rel = sub === '' ? e.name : `${sub}/${e.name}`;
      if (e.isDirectory() && !e.name.endsWith('.files')) await walk(rel);
      else if (e.isFile() && e.name.endsWith(TAPE_EXT)) out.push(rel.slice(0, -TAPE_EXT.length));
    }
  };
  await walk('');
  return out.sort();
}

/**
 * A header from another format version says so, and which tapedeck wrote it, instead of failing schema validation
 * ("line 1 is not a tape header").
 */
function checkFormat(where: string, value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  const h = value as Record<string, unknown>;
  if (h.type !== 'header' || !('format' in h) || TAPE_FORMATS_READ.includes(h.format as number)) return;
  const writer = typeof h.tapedeck === 'string' ? `tapedeck ${h.tapedeck}` : 'an unknown tapedeck';
  const newer = typeof h.format === 'number' && h.format > Math.max(...TAPE_FORMATS_READ);
  throw new TapedeckError(
    'TAPE_FORMAT_UNSUPPORTED',
    `tape ${where} was written by ${writer} in format ${JSON.stringify(h.format)}; this tapedeck (${VERSION}) reads format ` +
      `${TAPE_FORMATS_READ.join(', ').replace(/, (\d+)$/, ' and $1')}${newer ? ': upgrade tapedeck' : ''}`,
    { status: 500, details: { format: h.format, writtenBy: h.tapedeck, reads: TAPE_FORMATS_READ } },
  );
}

/**
 * A side file's bytes. It must resolve inside the tape's own `.files/` folder (not through a link out of it) and
 * match its recorded size and sha256; otherwise TAPE_CORRUPT.
 */
export async function readSideFile(file: string, body: StoredBody): Promise<Buffer> {
  const bytes = await readFile(await sideFilePath(file, body));
  const mismatch = blobMismatch(body, bytes);
  if (mismatch !== undefined) throw new TapedeckError('TAPE_CORRUPT', mismatch);
  return bytes;
}

/** How the reader reaches a tape file's side files. */
function sideFiles(file: string): SideFileAccess {
  return { read: (b) => readSideFile(file, b), open: (b) => streamSideFile(file, b), check: (b) => checkSideFile(file, b) };
}

/** That a side file is there, in the tape's folder, at its recorded size (its bytes are checked when read). */
async function checkSideFile(file: string, body: StoredBody): Promise<void> {
  const found = await stat(await sideFilePath(file, body));
  if (!found.isFile() || found.size !== body.bytes)
    throw new TapedeckError('TAPE_CORRUPT', `it is ${found.isFile() ? `${found.size} bytes` : 'not a file'}, recorded ${body.bytes} bytes`);
}

/** A side file's bytes as a stream, checked as they pass (see `TapeStore.openBlob`). */
export function streamSideFile(file: string, body: StoredBody): Readable {
  return verifiedBlobStream(async () => createReadStream(await sideFilePath(file, body)), body, file);
}

/** The side file a stored body names, refused when it would be outside the tape's own side folder. */
async function sideFilePath(file: string, body: StoredBody): Promise<string> {
  const full = resolveSideFile(file, body.file);
  // A symbolic link (git stores them) could point anywhere: the file itself must live in the folder.
  if (path.dirname(await realpath(full)) !== (await realpath(sideDir(file))))
    throw new TapedeckError('TAPE_CORRUPT', 'a link to a file outside the folder');
  return full;
}
