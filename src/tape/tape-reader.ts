import { createHash } from 'node:crypto';
import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { TapedeckError } from '../errors.js';
import { VERSION } from '../version.js';
import { resolveSideFile, sideDir, tapeFile, TAPE_EXT } from './paths.js';
import { ExchangeSchema, TAPE_FORMATS_READ, TapeHeaderSchema, type Body, type Exchange, type TapeHeader } from './schema.js';
import { isPartLine, mergeSessionLines, type PartLine } from './session-lines.js';

/** A line the reader could not use: reported, skipped, never fatal. */
export interface TapeProblem {
  line: number;
  message: string;
}

export interface LoadedTape {
  path: string;
  name: string;
  header: TapeHeader;
  exchanges: Exchange[];
  problems: TapeProblem[];
}

export interface ReadTapeOptions {
  /** Load side-file bodies into memory (default true): replay needs them, listing does not. */
  resolveFiles?: boolean;
}

/**
 * Read a tape. A torn last line (a crash mid-write) and corrupt lines are reported in `problems` and skipped;
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
  const lines = text.split('\n');
  const endsClean = text.endsWith('\n');
  if (endsClean) lines.pop();
  const problems: TapeProblem[] = [];
  let header: TapeHeader | undefined;
  const exchanges: Exchange[] = [];
  const parts: PartLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.trim() === '') continue;
    const isLast = i === lines.length - 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push({
        line: i + 1,
        message: isLast && !endsClean ? 'torn last line (the recorder stopped mid-write); skipped' : 'not valid JSON; skipped',
      });
      continue;
    }
    if (header === undefined) {
      checkFormat(file, value);
      const h = TapeHeaderSchema.safeParse(value);
      if (!h.success)
        throw new TapedeckError(
          'TAPE_CORRUPT',
          `${file}: line ${i + 1} is not a tape header (${h.error.issues[0]?.message ?? 'invalid'})`,
          { status: 500 },
        );
      header = h.data;
      continue;
    }
    if (isPartLine(value)) {
      parts.push({ line: i + 1, value });
      continue;
    }
    const ex = ExchangeSchema.safeParse(value);
    if (!ex.success) {
      const issue = ex.error.issues[0];
      problems.push({
        line: i + 1,
        message: `not a valid exchange (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}); skipped`,
      });
      continue;
    }
    exchanges.push(ex.data);
  }
  if (header === undefined) throw new TapedeckError('TAPE_CORRUPT', `${file}: empty tape (no header line)`, { status: 500 });
  if (parts.length > 0 || exchanges.some((ex) => ex.websocket !== undefined)) mergeSessionLines(exchanges, parts, problems);
  const usable = opts.resolveFiles !== false ? await resolveSideFiles(file, exchanges, problems) : exchanges;
  return { path: file, name: header.name, header, exchanges: usable, problems };
}

export async function loadTape(dir: string, name: string, opts?: ReadTapeOptions): Promise<LoadedTape> {
  return readTape(tapeFile(dir, name), opts);
}

/** Names of every tape under `dir` (recursively), sorted. */
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

export async function tapeModifiedAt(file: string): Promise<Date> {
  return (await stat(file)).mtime;
}

/**
 * A header from another format version says so, and which tapedeck wrote it, instead of failing schema validation
 * ("line 1 is not a tape header").
 */
function checkFormat(file: string, value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  const h = value as Record<string, unknown>;
  if (h.type !== 'header' || !('format' in h) || TAPE_FORMATS_READ.includes(h.format as number)) return;
  const writer = typeof h.tapedeck === 'string' ? `tapedeck ${h.tapedeck}` : 'an unknown tapedeck';
  const newer = typeof h.format === 'number' && h.format > Math.max(...TAPE_FORMATS_READ);
  throw new TapedeckError(
    'TAPE_FORMAT_UNSUPPORTED',
    `tape ${file} was written by ${writer} in format ${JSON.stringify(h.format)}; this tapedeck (${VERSION}) reads format ` +
      `${TAPE_FORMATS_READ.join(' and ')}${newer ? ': upgrade tapedeck' : ''}`,
    { status: 500, details: { format: h.format, writtenBy: h.tapedeck, reads: TAPE_FORMATS_READ } },
  );
}

/**
 * Load side-file bodies. A side file must resolve inside the tape's own `.files/` folder and match its recorded
 * size and sha256; otherwise (missing, tampered, a path such as `x.files/../../etc/passwd`) the exchange is
 * reported in `problems` and left out, so its body is never served.
 */
async function resolveSideFiles(file: string, exchanges: Exchange[], problems: TapeProblem[]): Promise<Exchange[]> {
  const resolve = async (body: Body | undefined): Promise<Body | undefined> => {
    if (body?.kind !== 'file') return body;
    const full = resolveSideFile(file, body.file);
    // A symbolic link (git stores them) could point anywhere: the file itself must live in the folder.
    if (path.dirname(await realpath(full)) !== (await realpath(sideDir(file))))
      throw new TapedeckError('TAPE_CORRUPT', 'a link to a file outside the folder');
    const bytes = await readFile(full);
    if (bytes.byteLength !== body.bytes) throw new TapedeckError('TAPE_CORRUPT', `size ${bytes.byteLength} bytes, recorded ${body.bytes}`);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    if (sha256 !== body.sha256)
      throw new TapedeckError('TAPE_CORRUPT', `sha256 ${sha256.slice(0, 12)}..., recorded ${body.sha256.slice(0, 12)}...`);
    if (body.encoding === 'base64') return { kind: 'base64', base64: bytes.toString('base64') };
    const text = bytes.toString('utf8');
    return body.encoding === 'json' ? { kind: 'json', json: JSON.parse(text) as unknown } : { kind: 'text', text };
  };
  const kept: Exchange[] = [];
  for (const ex of exchanges) {
    try {
      if (ex.request.body.kind === 'file') ex.request.body = (await resolve(ex.request.body)) ?? { kind: 'empty' };
      if (ex.response?.body?.kind === 'file') ex.response.body = await resolve(ex.response.body);
      for (const f of ex.websocket?.frames ?? []) if (f.data?.kind === 'file') f.data = await resolve(f.data);
      kept.push(ex);
    } catch (err) {
      const which =
        ex.request.body.kind === 'file'
          ? ex.request.body.file
          : ex.response?.body?.kind === 'file'
            ? ex.response.body.file
            : ((ex.websocket?.frames.find((f) => f.data?.kind === 'file')?.data as { file?: string } | undefined)?.file ?? '?');
      problems.push({
        line: 0,
        message: `exchange ${ex.id}: side file ${which} is corrupt or unreadable (${err instanceof TapedeckError ? err.message : (err as Error).message}); exchange skipped`,
      });
    }
  }
  return kept;
}
