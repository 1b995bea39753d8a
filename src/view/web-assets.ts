/**
 * The browser app: hand-written ES modules and CSS in `web/` beside this file (copied into `dist/view/web` by the
 * build, embedded in the single executable: src/shipped.ts), read once and served from memory. No bundler: the files
 * are small and the browser loads modules itself.
 */
import { shippedFile, shippedFolder } from '../shipped.js';

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
export function loadWebAssets(): Map<string, WebAsset> {
  const out = new Map<string, WebAsset>();
  for (const name of shippedFolder('view/web/')) {
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (type !== undefined) out.set(name, { body: shippedFile(`view/web/${name}`), type });
  }
  return out;
}
