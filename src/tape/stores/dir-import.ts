/**
 * A whole tape written into a folder store as it is (pull): the header and record lines exactly as the source
 * holds them, large bodies into the side folder, all or nothing, under the tape's lock so no recorder writes it
 * meanwhile. Everything is written beside the tape (`<tape>.jsonl.importing-<pid>`, `<tape>.files.importing-<pid>`)
 * and swapped in only once the whole tape is there: a copy that fails half-way (a damaged body in the source, the
 * database gone) leaves the tape it would have replaced exactly as it was, and no folder it created.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TapedeckError } from '../../errors.js';
import { acquireTapeLock } from './lock.js';
import { resolveSideFile, sideDir, tapeFile } from '../paths.js';
import type { ImportOptions, TapeImport } from '../store.js';

const FLUSH_BYTES = 1024 * 1024;

export async function importIntoDir(dir: string, tape: TapeImport, opts: ImportOptions = {}): Promise<number> {
  const file = tapeFile(dir, tape.name);
  if (existsSync(file) && opts.overwrite !== true)
    throw new TapedeckError('TAPE_EXISTS', `tape "${tape.name}" already exists in ${dir}`, { details: { tape: tape.name, dir } });
  // The first folder this creates (a tape in a sub-folder, a folder store not made yet): removed again on failure.
  const made = await mkdir(path.dirname(file), { recursive: true });
  let lock;
  try {
    lock = acquireTapeLock(file, tape.name);
  } catch (err) {
    removeMade(made, path.dirname(file));
    throw err;
  }
  const tmp = `${file}.importing-${process.pid}`;
  const side = sideDir(file);
  const newSide = `${side}.importing-${process.pid}`;
  let fd: number | undefined;
  let ok = false;
  try {
    rmSync(newSide, { recursive: true, force: true });
    fd = openSync(tmp, 'w');
    let buffer = tape.headerLine + '\n';
    let count = 0;
    for await (const { ex, line, stored } of tape.records) {
      for (const body of stored) {
        await mkdir(newSide, { recursive: true });
        // Checked against the tape's own side folder (no name leaves it), written to the one being built.
        await writeFile(path.join(newSide, path.basename(resolveSideFile(file, body.file))), await tape.readBlob(body));
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
    // The swap: the old side folder aside, the new one in, the tape file over the old one (atomic), the old folder gone.
    const oldSide = `${side}.replaced-${process.pid}`;
    const hadSide = existsSync(side);
    if (hadSide) renameSync(side, oldSide);
    if (existsSync(newSide)) renameSync(newSide, side);
    renameSync(tmp, file);
    if (hadSide) rmSync(oldSide, { recursive: true, force: true });
    ok = true;
    return count;
  } finally {
    if (!ok) {
      if (fd !== undefined) closeSync(fd);
      rmSync(tmp, { force: true });
      rmSync(newSide, { recursive: true, force: true });
    }
    lock.release();
    if (!ok) removeMade(made, path.dirname(file));
  }
}

/** Remove the folders `mkdir` made (from `made` down to `deepest`), where they are empty again. */
function removeMade(made: string | undefined, deepest: string): void {
  if (made === undefined) return;
  for (let d = deepest; d.length >= made.length; d = path.dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return; // not empty (someone else's file in it): kept
    }
    if (d === made) return;
  }
}

function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < bytes.byteLength) off += writeSync(fd, bytes, off, bytes.byteLength - off);
}
