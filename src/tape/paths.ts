import path from 'node:path';
import { TapedeckError } from '../errors.js';

export const TAPE_EXT = '.jsonl';

/**
 * The longest part of a tape name (between `/`), in UTF-8 bytes: a file name is at most 255 bytes, and a tape's files
 * add to its name (`.replay-<timestamp>` for its replays, `.jsonl.lock`: 43 characters).
 */
export const MAX_TAPE_NAME_PART = 200;
/** The longest tape name, sub-folders included, in UTF-8 bytes. */
export const MAX_TAPE_NAME = 1000;

/** A tape name: parts of letters (any script, with their marks), digits, `_`, `.`, `-`, joined by `/`. */
const TAPE_NAME = /^[\p{L}\p{N}\p{M}_.-]+(\/[\p{L}\p{N}\p{M}_.-]+)*$/u;

/**
 * Tape names are file names: letters, digits, `.`, `_`, `-`, and `/` for sub-folders; no `..`. A name may end in
 * `.jsonl` (the tape's file): it is taken off first, and what is left must be a tape name (`...jsonl` is `..`).
 */
export function validateTapeName(given: string): string {
  const name = given.endsWith(TAPE_EXT) ? given.slice(0, -TAPE_EXT.length) : given;
  const bytes = Buffer.byteLength(name, 'utf8');
  const longest = Math.max(...name.split('/').map((p) => Buffer.byteLength(p, 'utf8')));
  if (bytes > MAX_TAPE_NAME || longest > MAX_TAPE_NAME_PART) {
    throw new TapedeckError(
      'BAD_ARGS',
      `invalid tape name "${name.slice(0, 40)}...": the tape name is too long (${bytes > MAX_TAPE_NAME ? `${bytes} bytes, at most ${MAX_TAPE_NAME}` : `a part of ${longest} bytes, at most ${MAX_TAPE_NAME_PART} between "/"`})`,
      { status: 400 },
    );
  }
  if (name === '' || !TAPE_NAME.test(name) || name.split('/').some((p) => p === '..' || p === '.')) {
    const bare = name === given ? '' : ` (without its "${TAPE_EXT}": "${name}")`;
    throw new TapedeckError(
      'BAD_ARGS',
      `invalid tape name "${given}"${bare}: use letters, digits, ".", "_", "-" (and "/" for folders), no part "." or ".."`,
      { status: 400 },
    );
  }
  return name;
}

export function tapeFile(dir: string, name: string): string {
  return path.join(dir, `${validateTapeName(name)}${TAPE_EXT}`);
}

/** Folder for bodies too large to inline: `<tape>.files/`. */
export function sideDir(tapePath: string): string {
  return tapePath.slice(0, -TAPE_EXT.length) + '.files';
}

/**
 * The absolute path of a side file named on a tape (`<tape>.files/<name>`), or TAPE_CORRUPT when the name would
 * leave the tape's own `.files/` folder (`..`, an absolute path, another tape's folder). A tape is input: a
 * tampered one must not make tapedeck read (and serve) any other file.
 */
export function resolveSideFile(tapePath: string, rel: string): string {
  const dir = path.resolve(sideDir(tapePath));
  const full = path.resolve(path.dirname(tapePath), rel);
  if (path.dirname(full) !== dir || rel.includes('\\') || rel.includes('\0')) {
    throw new TapedeckError('TAPE_CORRUPT', `side file path "${rel}" is outside the tape's folder ${path.basename(dir)}/`, { status: 500 });
  }
  return full;
}
