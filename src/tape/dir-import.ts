/**
 * A whole tape written into a folder store as it is (pull): the header and record lines exactly as the source
 * holds them, large bodies into the side folder, all or nothing (written beside the tape, renamed into place),
 * under the tape's lock so no recorder writes it meanwhile.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TapedeckError } from '../errors.js';
import { acquireTapeLock } from './lock.js';
import { resolveSideFile, sideDir, tapeFile } from './paths.js';
import type { ImportOptions, TapeImport } from './store.js';

const FLUSH_BYTES = 1024 * 1024;

export async function importIntoDir(dir: string, tape: TapeImport, opts: ImportOptions = {}): Promise<number> {
  const file = tapeFile(dir, tape.name);
  await mkdir(path.dirname(file), { recursive: true });
  if (existsSync(file) && opts.overwrite !== true)
    throw new TapedeckError('TAPE_EXISTS', `tape "${tape.name}" already exists in ${dir}`, { details: { tape: tape.name, dir } });
  const lock = acquireTapeLock(file, tape.name);
  const tmp = `${file}.importing-${process.pid}`;
  const side = sideDir(file);
  let fd: number | undefined;
  try {
    rmSync(side, { recursive: true, force: true });
    fd = openSync(tmp, 'w');
    let buffer = tape.headerLine + '\n';
    let count = 0;
    for await (const { ex, line, stored } of tape.records) {
      for (const body of stored) {
        await mkdir(side, { recursive: true });
        await writeFile(resolveSideFile(file, body.file), await tape.readBlob(body));
      }
      buffer += line + '\n';
      if (ex !== undefined) count++;
      if (buffer.length >= FLUSH_BYTES) {
        writeAll(fd, buffer);
        buffer = '';
      }
    }
    writeAll(fd, buffer);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, file);
    return count;
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  } finally {
    lock.release();
  }
}

function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < bytes.byteLength) off += writeSync(fd, bytes, off, bytes.byteLength - off);
}
