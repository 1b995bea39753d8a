/**
 * What every store's writer does to an exchange before it stores it, in one place: assign its id and seq, redact
 * it (headers, query, URL credentials always; secrets inside bodies and events when the cheap prefilter hits),
 * move bodies over the size limit out to content-addressed storage, and serialise it as one JSON line in the
 * schema's key order. The line is what a folder store appends and what a database store keeps, so every store
 * holds the same record.
 */
import { createHash } from 'node:crypto';
import { createRedactor, type RedactOptions } from './redaction/redact.js';
import { TAPE_FORMAT_VERSION, TapeHeaderSchema, type Body, type Exchange, type SseEvent, type TapeHeader, type WsFrame } from './schema.js';
import { eventLines } from './event-file.js';
import { VERSION } from '../version.js';
import { createMarkerReplacer } from './redaction/secrets.js';
import { oauthSecrets, replaceSecrets } from './redaction/secret-oauth.js';
import { serializeExchange, serializeLine, type SerializedLine } from './serialize.js';
import { exceedsJsonDepth } from './json-depth.js';
import type { NewExchange, StoredBody, WireTexts, WriterOptions } from './store.js';

/** Stores bytes of one large body; resolves to the body that refers to them. */
export type PutBlob = (bytes: Buffer, encoding: StoredBody['encoding']) => Promise<StoredBody>;

export interface ExchangeEncoderOptions {
  redact?: RedactOptions | undefined;
  /** Bodies above this size (bytes of their JSON text) go to `putBlob`. Default 1 MiB. */
  largeBodyBytes?: number | undefined;
  /** The first `[REDACTED:N]` number this session may use (after the highest already on an appended-to tape). */
  firstMarker?: number;
  putBlob: PutBlob;
}

export interface EncodedExchange {
  ex: Exchange;
  /** Its JSON line, without the newline. */
  line: string;
}

export interface ExchangeEncoder {
  /**
   * Synchronous unless a body must be stored apart (then a promise): a writer that queues the result at once keeps
   * its records in call order without waiting a turn.
   */
  encode(input: NewExchange, seq: number): EncodedExchange | Promise<EncodedExchange>;
  /** A session's messages as they are stored: redacted like bodies (the same markers), large ones stored apart. */
  encodeFrames(frames: readonly WsFrame[]): WsFrame[] | Promise<WsFrame[]>;
  /**
   * The side-file lines of a stream's events stored apart (`response.eventsFile`, `event-file.ts`): redacted as the
   * exchange's line would have been, with the same markers.
   */
  encodeEventLines(events: readonly SseEvent[]): string;
  /** Redacts URLs the way exchanges are (route upstreams in a header). */
  redactUrl(url: string): string;
}

export const DEFAULT_LARGE_BODY_BYTES = 1024 * 1024;

export function createExchangeEncoder(opts: ExchangeEncoderOptions): ExchangeEncoder {
  const redactor = createRedactor(opts.redact);
  const largeBodyBytes = opts.largeBodyBytes ?? DEFAULT_LARGE_BODY_BYTES;
  const markers = createMarkerReplacer(opts.firstMarker ?? 1);

  const externalize = async (body: Body | undefined): Promise<Body | undefined> => {
    if (body === undefined || body.kind === 'empty' || body.kind === 'file') return body;
    const [encoding, content] =
      body.kind === 'json'
        ? (['json', JSON.stringify(body.json)] as const)
        : body.kind === 'text'
          ? (['text', body.text] as const)
          : (['base64', body.base64] as const);
    if (content.length <= largeBodyBytes) return body;
    const bytes = encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
    return opts.putBlob(bytes, encoding);
  };

  const { secrets } = redactor;
  /**
   * The prefilter over a line. A recorded answer served again (`wire.response`) keeps what the prefilter said of its
   * text: only the rest of the line is scanned. (No rule's match crosses from one top-level field into the next.)
   */
  const mayHold = ({ line, response }: SerializedLine, wire: WireTexts | undefined): boolean => {
    const kept = wire?.response;
    if (response === undefined || kept === undefined) return secrets.mayHold(line);
    if (kept.scanned?.by !== secrets) kept.scanned = { by: secrets, hit: secrets.mayHold(kept.text) };
    return kept.scanned.hit || secrets.mayHold(line.slice(0, response.start)) || secrets.mayHold(line.slice(response.end));
  };

  return {
    redactUrl: redactor.url,
    encodeEventLines(events) {
      const text = eventLines(events);
      return secrets.mayHold(text) ? eventLines(secrets.redact(events, markers)) : text;
    },
    encodeFrames(frames) {
      let out = frames as WsFrame[];
      if (redactor.secrets.mayHold(JSON.stringify(out))) out = redactor.secrets.redact(out, markers);
      const large = (f: WsFrame): boolean =>
        f.data !== undefined &&
        ((f.data.kind === 'base64' && f.data.base64.length > largeBodyBytes) ||
          (f.data.kind === 'text' && f.data.text.length > largeBodyBytes) ||
          (f.data.kind === 'json' && JSON.stringify(f.data.json).length > largeBodyBytes));
      if (!out.some(large)) return out;
      const stored = out;
      return (async () => {
        const sized: WsFrame[] = [];
        for (const f of stored) sized.push(large(f) ? { ...f, data: (await externalize(f.data)) as Body } : f);
        return sized;
      })();
    },
    encode(input, seq) {
      // Object.assign rather than a spread: inputs come in many shapes, and a spread of them is V8's slow path. (The
      // `wire` texts ride along unwritten: the line has the schema's keys only.)
      let ex = redactor.exchange(Object.assign({ type: 'exchange', id: exchangeId(seq), seq }, input) as Exchange);
      // OAuth's authorization codes are secrets by their place (`secret-oauth.ts`): replaced wherever they appear.
      const placed = oauthSecrets(ex);
      if (placed.length > 0) ex = replaceSecrets(ex, placed, (s) => markers(s.value, 'oauth', s.path));
      const serialized = serializeLine(ex, input.wire);
      let line = serialized.line;
      // Secrets inside bodies, events and meanings: one cheap pass over the line; the walk only when it hits (and a
      // redacted part is a new object: it is stringified, never written from the text it came as).
      if (mayHold(serialized, input.wire)) {
        ex = redactor.secrets.redact(ex, markers);
        line = serializeExchange(ex);
      }
      if (line.length <= largeBodyBytes) return { ex, line };
      // Something in it is large: bodies above the limit are stored apart, whole (already redacted).
      const redacted = ex;
      return (async (): Promise<EncodedExchange> => {
        let out: Exchange = {
          ...redacted,
          request: { ...redacted.request, body: (await externalize(redacted.request.body)) ?? { kind: 'empty' } },
        };
        if (out.response?.body !== undefined) out = { ...out, response: { ...out.response, body: await externalize(out.response.body) } };
        return { ex: out, line: serializeExchange(out) };
      })();
    },
  };
}

/** An exchange's id: its seq, zero-padded (`000042`). */
export function exchangeId(seq: number): string {
  return String(seq).padStart(6, '0');
}

/** The body that refers to stored bytes: `<tape>.files/<sha256>.<ext>`, the same name in every store. */
export function storedBody(tapeName: string, bytes: Uint8Array, encoding: StoredBody['encoding'], sha256?: string): StoredBody {
  const sha = sha256 ?? createHash('sha256').update(bytes).digest('hex');
  return {
    kind: 'file',
    file: `${sideFolderName(tapeName)}/${sha}.${EXTENSIONS[encoding]}`,
    encoding,
    bytes: bytes.byteLength,
    sha256: sha,
  };
}

const EXTENSIONS: Record<StoredBody['encoding'], string> = { json: 'json', text: 'txt', base64: 'bin' };

/** The side folder's name beside a tape file: `<last segment of the name>.files`. */
export function sideFolderName(tapeName: string): string {
  return `${tapeName.slice(tapeName.lastIndexOf('/') + 1)}.files`;
}

/** A stored body's bytes as the body they stand for (JSON parsed, text decoded, binary as base64). */
export function inlineBody(stored: StoredBody, bytes: Buffer): Body {
  if (stored.encoding === 'base64') return { kind: 'base64', base64: bytes.toString('base64') };
  const text = bytes.toString('utf8');
  // JSON too deep to walk (never written so by tapedeck) is served as the text it is.
  return stored.encoding === 'json' && !exceedsJsonDepth(text)
    ? { kind: 'json', json: JSON.parse(text) as unknown }
    : { kind: 'text', text };
}

/** Check stored bytes against the body's recorded size and sha256 (TAPE_CORRUPT-worthy message, or undefined). */
export function blobMismatch(stored: StoredBody, bytes: Uint8Array): string | undefined {
  if (bytes.byteLength !== stored.bytes) return `size ${bytes.byteLength} bytes, recorded ${stored.bytes}`;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== stored.sha256) return `sha256 ${sha256.slice(0, 12)}..., recorded ${stored.sha256.slice(0, 12)}...`;
  return undefined;
}

/** A new tape's header: format, writer version, name, creation time, and the routes with credentials redacted. */
export function newTapeHeader(name: string, opts: WriterOptions['header'], redact?: RedactOptions, createdAt = new Date()): TapeHeader {
  const url = createRedactor(redact).url;
  return TapeHeaderSchema.parse({
    type: 'header',
    format: TAPE_FORMAT_VERSION,
    tapedeck: VERSION,
    name,
    createdAt: createdAt.toISOString(),
    ...opts,
    routes: opts.routes.map((r) => ({ prefix: r.prefix, upstream: url(r.upstream) })),
  });
}
