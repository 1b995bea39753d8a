/**
 * The browser app: hand-written ES modules and CSS in `web/` beside this file (copied into `dist/view/web` by the
 * build), read once and served from memory. No bundler: the files are small and the browser loads modules itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};

export interface WebAsset {
  body: Buffer;
  type: string;
}

/** Every file of the web folder by name (`index.html`, `app.js`, ...). */
export function loadWebAssets(dir: string = fileURLToPath(new URL('./web/', import.meta.url))): Map<string, WebAsset> {
  const out = new Map<string, WebAsset>();
  for (const name of readdirSync(dir)) {
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (type !== undefined) out.set(name, { body: readFileSync(`${dir}/${name}`), type });
  }
  return out;
}
