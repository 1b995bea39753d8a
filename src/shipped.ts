/**
 * The files tapedeck ships beside its code, read from one place: package.json (the version), config/default.yaml,
 * config/prices.yaml and the viewer's web/ folder. From the npm package or a checkout they are files, found relative
 * to the code's folder (src/, dist/); in the single executable (`npm run build:exe`, scripts/build-exe.mjs) nothing
 * lies beside the code: they are the executable's embedded assets (node:sea), under the same names.
 *
 * A name is a path relative to the code's folder, written with `/`: `../package.json`, `../config/default.yaml`,
 * `view/web/app.js`. SHIPPED lists every one of them (the build embeds exactly these, and a folder's listing is
 * known without reading a directory).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as sea from 'node:sea';

/** The shipped single files; folders (`view/web/`) are listed when the executable is built. */
export const SHIPPED_FILES = ['../package.json', '../config/default.yaml', '../config/prices.yaml'] as const;
export const SHIPPED_FOLDERS = ['view/web/'] as const;
/** The embedded asset that lists every other (a single executable cannot list its assets on Node 20). */
export const SHIPPED_INDEX = 'tapedeck:shipped';

/** Whether this is the single executable (node:sea) rather than Node running tapedeck's files. */
export function insideExecutable(): boolean {
  return sea.isSea();
}

/** The code's folder (src/ or dist/): where a shipped name is resolved from, outside the executable. */
function codeFolder(): string {
  return path.dirname(fileURLToPath(import.meta.url));
}

/** Where a shipped name lives as a file (outside the executable), or what it is inside it: for messages. */
export function shippedPlace(name: string): string {
  return insideExecutable() ? `(built in) ${name.replace(/^(\.\.\/)+/, '')}` : path.resolve(codeFolder(), name);
}

/** A shipped file's bytes. */
export function shippedFile(name: string): Buffer {
  if (insideExecutable()) return Buffer.from(sea.getAsset(name));
  return readFileSync(path.resolve(codeFolder(), name));
}

/** A shipped file's text (UTF-8). */
export function shippedText(name: string): string {
  return shippedFile(name).toString('utf8');
}

/** The names of the files in a shipped folder (`view/web/` -> `index.html`, `app.js`, ...). */
export function shippedFolder(folder: (typeof SHIPPED_FOLDERS)[number]): string[] {
  if (insideExecutable()) {
    const all = JSON.parse(sea.getAsset(SHIPPED_INDEX, 'utf8')) as string[];
    return all.filter((n) => n.startsWith(folder) && !n.slice(folder.length).includes('/')).map((n) => n.slice(folder.length));
  }
  return readdirSync(path.resolve(codeFolder(), folder), { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}
