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
  if (bytes.byteLength === 0) return { kind: 'empty' };
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = decodeUtf8(buf);
  if (text === undefined) return { kind: 'base64', base64: buf.toString('base64') };
  const trimmed = text.trimStart();
  // JSON too deep to walk stays text: recorded whole, never a value that would overflow a walk (json-depth.ts).
  if ((trimmed.startsWith('{') || trimmed.startsWith('[') || isJsonContentType(contentType)) && !exceedsJsonDepth(text)) {
    try {
      const json: unknown = JSON.parse(text);
      // Keep the exact text when a plain re-serialisation would change more than whitespace (e.g. big numbers).
      if (sameJsonText(json, text)) return lineSafeJson(text) ? new ParsedJsonBody(json, text, buf) : { kind: 'json', json };
    } catch {
      // not JSON: fall through to text
    }
  }
  if (contentType !== undefined && !isTextualContentType(contentType) && !/^text\//.test(contentType) && hasControlChars(text)) {
    return { kind: 'base64', base64: buf.toString('base64') };
  }
  return { kind: 'text', text };
}

/**
 * A JSON body parsed from wire bytes whose text can stand for it on a tape line (`lineSafeJson`): the line embeds that
 * text instead of stringifying the value again, and serving it sends the bytes it came as. The text lives in private
 * fields, which a copy (`{ ...body }`, a redacted copy, `structuredClone`) never carries: a changed body is stringified.
 */
class ParsedJsonBody {
  readonly kind = 'json';
  readonly #text: string;
  readonly #bytes: Buffer;
  constructor(
    readonly json: unknown,
    text: string,
    bytes: Buffer,
  ) {
    this.#text = text;
    this.#bytes = bytes;
  }
  static text(body: Body): string | undefined {
    return body instanceof ParsedJsonBody ? body.#text : undefined;
  }
  static bytes(body: Body): Buffer | undefined {
    return body instanceof ParsedJsonBody ? body.#bytes : undefined;
  }
}

/** A decoded body: its bytes, and for JSON the text they are (which the replay tape's line reuses). */
const decoded = new WeakMap<Body, { bytes: Buffer; json?: string }>();

/**
 * The bytes a tape body stands for. JSON is written compactly (a JSON-equivalent of the original).
 * Cached per body object: replay serves the same recorded body many times.
 */
export function decodeBody(body: Body | undefined): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  const parsed = ParsedJsonBody.bytes(body);
  if (parsed !== undefined) return parsed;
  let entry = decoded.get(body);
  if (entry === undefined) {
    entry = decodeUncached(body);
    decoded.set(body, entry);
  }
  return entry.bytes;
}

/** The JSON text of a JSON body that was decoded (served) already, or parsed from text that can stand for it: serialising it again can be skipped. */
export function decodedJsonText(body: Body): string | undefined {
  return ParsedJsonBody.text(body) ?? decoded.get(body)?.json;
}

function decodeUncached(body: Body): { bytes: Buffer; json?: string } {
  if (body.kind === 'json') {
    const json = JSON.stringify(body.json);
    return { bytes: Buffer.from(json, 'utf8'), json };
  }
  return { bytes: decodeBytes(body) };
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
