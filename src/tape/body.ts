import { isUtf8 } from 'node:buffer';
import { TapedeckError } from '../errors.js';
import { exceedsJsonDepth, parseJson } from './json-depth.js';
import type { Body } from './schema.js';

const TEXTUAL = /^(text\/|application\/(json|[\w.+-]+\+json|x-ndjson|xml|[\w.+-]+\+xml|x-www-form-urlencoded|javascript|graphql))/i;

/** True when a content type names text (so bytes are stored as text, not base64). */
export function isTextualContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && TEXTUAL.test(contentType.trim());
}

export function isJsonContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/(json|[\w.+-]+\+json)/i.test(contentType.trim());
}

/**
 * Turn wire bytes into a tape body: JSON when it parses as JSON, text when it is valid UTF-8 text, base64 otherwise.
 * JSON is detected by content, not only by content type, because many servers send JSON as text/plain.
 */
export function encodeBody(bytes: Uint8Array, contentType?: string): Body {
  return encodeWireBody(bytes, contentType).body;
}

/**
 * `encodeBody`, and for a JSON body whose text can stand for it on a tape line (`lineSafeJson`) that text: the
 * writer then puts the text as it came on the line (spaces and number spellings kept) instead of stringifying the
 * value again (`WireText` in `store.ts`).
 */
export function encodeWireBody(bytes: Uint8Array, contentType?: string): { body: Body; text?: string } {
  if (bytes.byteLength === 0) return { body: { kind: 'empty' } };
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = decodeUtf8(buf);
  if (text === undefined) return { body: { kind: 'base64', base64: buf.toString('base64') } };
  const trimmed = text.trimStart();
  // JSON too deep to walk stays text: recorded whole, never a value that would overflow a walk (json-depth.ts).
  if ((trimmed.startsWith('{') || trimmed.startsWith('[') || isJsonContentType(contentType)) && !exceedsJsonDepth(text)) {
    try {
      const json: unknown = JSON.parse(text);
      // Keep the exact text when a plain re-serialisation would change more than whitespace (e.g. big numbers).
      if (sameJsonText(json, text)) return lineSafeJson(text) ? { body: { kind: 'json', json }, text } : { body: { kind: 'json', json } };
    } catch {
      // not JSON: fall through to text
    }
  }
  if (contentType !== undefined && !isTextualContentType(contentType) && !/^text\//.test(contentType) && hasControlChars(text)) {
    return { body: { kind: 'base64', base64: buf.toString('base64') } };
  }
  return { body: { kind: 'text', text } };
}

/** The bytes a tape body stands for. JSON is written compactly (a JSON-equivalent of the original). */
export function decodeBody(body: Body | undefined): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  if (body.kind === 'json') return Buffer.from(JSON.stringify(body.json), 'utf8');
  return decodeBytes(body);
}

function decodeBytes(body: Exclude<Body, { kind: 'json' }>): Buffer {
  switch (body.kind) {
    case 'empty':
      return Buffer.alloc(0);
    case 'text':
      return Buffer.from(body.text, 'utf8');
    case 'base64':
      return Buffer.from(body.base64, 'base64');
    case 'file':
      throw new TapedeckError('INTERNAL', 'file bodies must be resolved by the tape reader before decoding');
  }
}

/** The body as parsed JSON, when it is JSON; undefined otherwise. */
export function bodyJson(body: Body | undefined): unknown {
  if (body === undefined) return undefined;
  if (body.kind === 'json') return body.json;
  if (body.kind === 'text') {
    try {
      return parseJson(body.text);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The body as text (JSON serialised), or undefined for binary. */
export function bodyText(body: Body | undefined): string | undefined {
  if (body === undefined) return undefined;
  switch (body.kind) {
    case 'empty':
      return '';
    case 'json':
      return JSON.stringify(body.json);
    case 'text':
      return body.text;
    default:
      return undefined;
  }
}

/**
 * Whether JSON text can go on a tape line as it is, in place of `JSON.stringify` of its value: one line (no CR or LF
 * between tokens), and every string escaped as `JSON.stringify` escapes it (no `\u` or `\/` escapes), so the secret
 * prefilter, which reads the line, sees every string exactly as it would in the re-serialised form. Insignificant
 * spaces and number spellings (`1.0`, `1e3`) may differ from the re-serialised text; the value read back is the same.
 */
export function lineSafeJson(text: string): boolean {
  if (text.includes('\n') || text.includes('\r')) return false;
  for (let i = text.indexOf('\\'); i !== -1; i = text.indexOf('\\', i + 2)) {
    const next = text.charCodeAt(i + 1);
    // "  \\  b  f  n  r  t
    if (next !== 34 && next !== 92 && next !== 98 && next !== 102 && next !== 110 && next !== 114 && next !== 116) return false;
  }
  return true;
}

/** The bytes as text when they are UTF-8. Decoding turns invalid bytes into U+FFFD: only text that has one is checked. */
function decodeUtf8(buf: Buffer): string | undefined {
  const text = buf.toString('utf8');
  return !text.includes('\uFFFD') || isUtf8(buf) ? text : undefined;
}

function hasControlChars(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u0008\u000e-\u001f]/.test(text);
}

function sameJsonText(json: unknown, text: string): boolean {
  // Numbers that JSON.parse cannot hold exactly (> 2^53, long decimals) would change on re-serialisation.
  if (!/\d{16,}/.test(text)) return true;
  return JSON.stringify(json).replace(/\s/g, '') === text.replace(/\s/g, '');
}
