import path from 'node:path';
import { TapedeckError } from '../errors.js';

export const TAPE_EXT = '.jsonl';

/** Tape names are file names: letters, digits, `.`, `_`, `-`, and `/` for sub-folders; no `..`. */
export function validateTapeName(name: string): string {
  if (name === '' || !/^[\w.-]+(\/[\w.-]+)*$/.test(name) || name.split('/').some((p) => p === '..' || p === '.')) {
    throw new TapedeckError('BAD_ARGS', `invalid tape name "${name}": use letters, digits, ".", "_", "-" (and "/" for folders)`, {
      status: 400,
    });
  }
  return name.endsWith(TAPE_EXT) ? name.slice(0, -TAPE_EXT.length) : name;
}

export function tapeFile(dir: string, name: string): string {
  return path.join(dir, `${validateTapeName(name)}${TAPE_EXT}`);
}

/** Folder for bodies too large to inline: `<tape>.files/`. */
export function sideDir(tapePath: string): string {
  return tapePath.slice(0, -TAPE_EXT.length) + '.files';
}
