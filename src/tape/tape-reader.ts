import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { TapedeckError } from '../errors.js';
import { sideDir, tapeFile, TAPE_EXT } from './paths.js';
import { ExchangeSchema, TapeHeaderSchema, type Body, type Exchange, type TapeHeader } from './schema.js';

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
  if (opts.resolveFiles !== false) await resolveSideFiles(file, exchanges, problems);
  return { path: file, name: header.name, header, exchanges, problems };
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

async function resolveSideFiles(file: string, exchanges: Exchange[], problems: TapeProblem[]): Promise<void> {
  const base = path.dirname(sideDir(file));
  const resolve = async (body: Body | undefined, ex: Exchange): Promise<Body | undefined> => {
    if (body?.kind !== 'file') return body;
    try {
      const bytes = await readFile(path.join(base, body.file));
      if (body.encoding === 'base64') return { kind: 'base64', base64: bytes.toString('base64') };
      const text = bytes.toString('utf8');
      return body.encoding === 'json' ? { kind: 'json', json: JSON.parse(text) as unknown } : { kind: 'text', text };
    } catch (err) {
      problems.push({ line: 0, message: `exchange ${ex.id}: side file ${body.file} unreadable (${(err as Error).message})` });
      return body;
    }
  };
  for (const ex of exchanges) {
    if (ex.request.body.kind === 'file') ex.request.body = (await resolve(ex.request.body, ex)) ?? { kind: 'empty' };
    if (ex.response?.body?.kind === 'file') ex.response.body = await resolve(ex.response.body, ex);
  }
}
