/**
 * A tape as HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), the format browser devtools and HAR
 * viewers import: one entry per exchange in timeline order, with its timings (time to first byte as `wait`, the
 * rest as `receive`), headers and bodies as on the tape (secrets stay redacted), binary bodies in base64, and an
 * event stream's events in `_eventSourceMessages` (`{type, time, eventId?, data}`, time in seconds since the
 * epoch as in Chrome's `_webSocketMessages`), the de-facto extension for SSE (a stream stored apart, over 16 MiB, is
 * its size `-1` and a comment: too large for a HAR). A WebSocket session is one entry, its
 * `ws://` / `wss://` upgrade with status 101, and its messages in `_webSocketMessages` as Chrome writes them
 * (`{type: "send" | "receive", time, opcode: 1 text / 2 binary (base64), data}`). stdio MCP messages are entries too,
 * `POST tapedeck-stdio:SERVER` with the JSON-RPC message as the body (they have no HTTP; `_transport: "stdio"`).
 */
import { STATUS_CODES } from 'node:http';
import { decodeBody } from '../tape/body.js';
import { sseEventText } from '../tape/framing/sse.js';
import type { Body, Exchange, HeaderMap } from '../tape/schema.js';
import type { LoadedTape } from '../tape/tape-reader.js';
import { VERSION } from '../version.js';
import { timelineOf } from '../view/model.js';
import { exchangeUrl } from './exchange-url.js';
import { isSessionResponse } from '../providers/sessions/expand.js';

export interface HarNameValue {
  name: string;
  value: string;
}

export interface HarEntry {
  pageref: string;
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: HarNameValue[];
    headers: HarNameValue[];
    queryString: HarNameValue[];
    postData?: { mimeType: string; text: string; params: HarNameValue[]; _encoding?: 'base64' };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: HarNameValue[];
    headers: HarNameValue[];
    content: { size: number; mimeType: string; text?: string; encoding?: 'base64'; comment?: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
    _error?: string;
  };
  cache: Record<string, never>;
  timings: { blocked: number; dns: number; connect: number; ssl: number; send: number; wait: number; receive: number };
  comment: string;
  _eventSourceMessages?: { type: string; time: number; eventId?: string; data: string }[];
  _resourceType?: 'websocket';
  _webSocketMessages?: { type: 'send' | 'receive'; time: number; opcode: 1 | 2; data: string }[];
  _tapedeck: { id: string; seq: number; route: string; transport: Exchange['transport']; match?: Exchange['match'] };
  _transport?: 'stdio';
}

export interface Har {
  log: {
    version: '1.2';
    creator: { name: string; version: string };
    pages: { startedDateTime: string; id: string; title: string; pageTimings: { onContentLoad: number; onLoad: number } }[];
    entries: HarEntry[];
    comment: string;
  };
}

const PAGE_ID = 'tape';

export function toHar(tape: LoadedTape): Har {
  const h = tape.header;
  return {
    log: {
      version: '1.2',
      creator: { name: 'tapedeck', version: VERSION },
      pages: [{ startedDateTime: h.createdAt, id: PAGE_ID, title: tape.name, pageTimings: { onContentLoad: -1, onLoad: -1 } }],
      // The network's entries: a session's responses (LLM steps read from its messages) are in the session's entry.
      entries: timelineOf(tape.exchanges)
        .filter((ex) => !isSessionResponse(ex))
        .map(entryOf),
      comment: `tapedeck tape "${tape.name}" (${h.mode}${h.replayOf ? ` of ${h.replayOf.tape}` : ''}); secrets are redacted as on the tape`,
    },
  };
}

function entryOf(ex: Exchange): HarEntry {
  const duration = round(ex.timing.durationMs);
  const wait = round(Math.min(ex.timing.ttfbMs ?? duration, duration));
  const started = Date.parse(ex.startedAt);
  const entry: HarEntry = {
    pageref: PAGE_ID,
    startedDateTime: ex.startedAt,
    time: duration,
    request: {
      method: ex.request.method,
      url: ex.websocket ? exchangeUrl(ex).replace(/^http/, 'ws') : exchangeUrl(ex),
      httpVersion: ex.transport === 'stdio' ? 'stdio' : 'HTTP/1.1',
      cookies: [],
      headers: pairs(ex.request.headers),
      queryString: ex.request.query.map(([name, value]) => ({ name, value })),
      headersSize: -1,
      bodySize: bodySize(ex.request.body),
    },
    response: responseOf(ex),
    cache: {},
    timings: { blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait, receive: round(duration - wait) },
    comment: labelOf(ex),
    _tapedeck: { id: ex.id, seq: ex.seq, route: ex.route, transport: ex.transport, ...(ex.match ? { match: ex.match } : {}) },
  };
  const post = postDataOf(ex);
  if (post) entry.request.postData = post;
  const events = ex.response?.events;
  if (events)
    entry._eventSourceMessages = events.map((e) => ({
      type: e.event ?? 'message',
      time: (started + e.offsetMs) / 1000,
      ...(e.id === undefined ? {} : { eventId: e.id }),
      data: e.data,
    }));
  if (ex.websocket) {
    entry._resourceType = 'websocket';
    entry._webSocketMessages = ex.websocket.frames
      .filter((f) => f.kind !== 'close')
      .map((f) => {
        const binary = f.kind === 'binary';
        const bytes = decodeBody(f.data);
        return {
          type: f.from === 'client' ? ('send' as const) : ('receive' as const),
          time: (started + f.offsetMs) / 1000,
          opcode: binary ? (2 as const) : (1 as const),
          data: binary ? bytes.toString('base64') : bytes.toString('utf8'),
        };
      });
  }
  if (ex.transport === 'stdio') entry._transport = 'stdio';
  return entry;
}

function responseOf(ex: Exchange): HarEntry['response'] {
  const r = ex.response;
  const error = ex.error ? `${ex.error.code}: ${ex.error.message}` : undefined;
  if (!r)
    return {
      status: 0,
      statusText: '',
      httpVersion: '',
      cookies: [],
      headers: [],
      content: { size: 0, mimeType: 'x-unknown' },
      redirectURL: '',
      headersSize: -1,
      bodySize: -1,
      ...(error ? { _error: error } : {}),
    };
  const mimeType =
    header(r.headers, 'content-type') ?? (r.events ? 'text/event-stream' : r.body?.kind === 'json' ? 'application/json' : 'x-unknown');
  let content: HarEntry['response']['content'];
  if (r.events) {
    const text = r.events.map(sseEventText).join('') + (r.tail ?? '');
    content = { size: Buffer.byteLength(text), mimeType, text };
  } else if (r.eventsFile) {
    // Too large for a HAR (and for memory): the tape keeps it, `tapedeck replay` serves it.
    content = {
      size: -1,
      mimeType,
      comment: `${r.eventsFile.events} events stored apart on the tape (${r.eventsFile.file}), not exported`,
    };
  } else content = { ...contentOf(r.body), mimeType };
  return {
    status: r.status,
    statusText: STATUS_CODES[r.status] ?? '',
    httpVersion: ex.transport === 'stdio' ? 'stdio' : 'HTTP/1.1',
    cookies: [],
    headers: pairs(r.headers),
    content,
    redirectURL: header(r.headers, 'location') ?? '',
    headersSize: -1,
    bodySize: content.size,
    ...(error ? { _error: error } : {}),
  };
}

/** A body as HAR content: text as it was (JSON compact), binary as base64, a side file the reader could not load as its size. */
function contentOf(body: Body | undefined): { size: number; text?: string; encoding?: 'base64' } {
  if (body === undefined || body.kind === 'empty') return { size: 0 };
  if (body.kind === 'file') return { size: body.bytes };
  if (body.kind === 'base64') return { size: Buffer.from(body.base64, 'base64').byteLength, text: body.base64, encoding: 'base64' };
  const bytes = decodeBody(body);
  return { size: bytes.byteLength, text: bytes.toString('utf8') };
}

function postDataOf(ex: Exchange): HarEntry['request']['postData'] | undefined {
  const body = ex.request.body;
  if (body.kind === 'empty') return undefined;
  const c = contentOf(body);
  const mimeType = header(ex.request.headers, 'content-type') ?? (body.kind === 'json' ? 'application/json' : 'application/octet-stream');
  return { mimeType, text: c.text ?? '', params: [], ...(c.encoding ? { _encoding: c.encoding } : {}) };
}

function bodySize(body: Body): number {
  return body.kind === 'empty' ? 0 : contentOf(body).size;
}

function pairs(headers: HeaderMap): HarNameValue[] {
  return Object.entries(headers).map(([name, value]) => ({ name, value }));
}

function header(headers: HeaderMap, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

/** What the entry was, in a few words (devtools shows the comment): `LLM gpt-4o`, `MCP tools/call echo`. */
function labelOf(ex: Exchange): string {
  const match = ex.match ? ` · replay: ${ex.match.kind}` : '';
  if (ex.llm) return `LLM ${ex.llm.provider} ${ex.llm.model ?? ex.llm.api}${match}`;
  if (ex.mcp) return `MCP ${ex.mcp.method}${ex.mcp.toolName ? ` ${ex.mcp.toolName}` : ''}${match}`;
  return `HTTP ${ex.route}${match}`;
}

function round(ms: number): number {
  return Math.max(0, Math.round(ms * 1000) / 1000);
}
