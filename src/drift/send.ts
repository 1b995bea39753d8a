/**
 * Sending a tape's calls again, one after the other in the tape's order, through the proxy's own forwarding (so a
 * fresh answer is captured exactly as a recording would be: events with their offsets, time to first byte). MCP
 * calls go in the session drift opens: the recorded `initialize` is sent first and the server's new session id
 * replaces the recorded one on every later call of that session (a session with no recorded `initialize` gets
 * one). Sessions are ended (DELETE) when done. Keys drift added never stay on what it keeps of a call.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { request, type Dispatcher } from 'undici';
import { describeExchange } from '../providers/describe.js';
import { forwardAndCapture } from '../upstream/forward.js';
import { teeRecord } from '../engine/tee.js';
import { httpCall } from '../http/http-call.js';
import type { ResponseSink } from '../http/sink.js';
import type { ProxyRequest } from '../http/types.js';
import { decodeBody } from '../tape/body.js';
import { REDACTED } from '../tape/redaction/redact.js';
import { upstreamUrl } from '../tape/routes.js';
import type { Exchange, Route } from '../tape/schema.js';
import type { Readable } from 'node:stream';
import { TapedeckError } from '../errors.js';
import type { BodySpill } from '../http/body-spill.js';
import type { StoredBody } from '../tape/store.js';
import type { Scrubber } from './scrub.js';
import { VERSION } from '../version.js';
import type { PlannedCall } from './plan.js';

export interface SendOptions {
  dispatcher: Dispatcher;
  /** Told before each call goes out. */
  onSend?: (call: PlannedCall) => void;
  /** Where an answer too large to hold goes as it streams (bodies and event streams over 16 MiB). */
  spill?: BodySpill;
  /** A recorded request body too large to hold, from the tape's store. */
  openRecorded?: (body: StoredBody) => Readable;
  /** What is kept of each fresh call is redacted by it (the keys drift sent never stay on it). */
  scrub?: Scrubber;
}

/** The fresh exchange of each call (described like a recording; same `id` and `seq` as the recorded one). */
export async function sendCalls(calls: readonly PlannedCall[], opts: SendOptions): Promise<Map<PlannedCall, Exchange>> {
  const out = new Map<PlannedCall, Exchange>();
  /** Recorded session (`ROUTE#ID`) -> the session the server gave drift. */
  const sessions = new Map<string, string>();
  const opened: { route: Route; path: string; id: string; headers: Record<string, string>; keysTo: string | undefined }[] = [];
  for (const call of calls) {
    const headers = { ...call.headers };
    const method = call.exchange.mcp?.method;
    if (call.session !== undefined && method !== 'initialize') {
      if (!sessions.has(call.session) && call.exchange.mcp?.sessionId !== undefined) {
        // The tape has no initialize for this session (or it was not sent): open one.
        const fresh = await send(initializeCall(call), opts);
        const id = fresh.response?.headers['mcp-session-id'];
        if (id !== undefined) {
          sessions.set(call.session, id);
          opened.push({ route: call.route, path: call.exchange.request.path, id, headers: mcpHeaders(call.headers), keysTo: call.keysTo });
          await send({ ...initializeCall(call), body: { jsonrpc: '2.0', method: 'notifications/initialized' } }, opts, id);
        }
      }
    }
    const session = call.session === undefined || method === 'initialize' ? undefined : sessions.get(call.session);
    if (session === undefined) delete headers['mcp-session-id'];
    opts.onSend?.(call);
    const fresh = await send(
      { route: call.route, exchange: call.exchange, headers, query: call.query, keysTo: call.keysTo },
      opts,
      session,
    );
    if (method === 'initialize' && call.session !== undefined) {
      const id = fresh.response?.headers['mcp-session-id'];
      if (id !== undefined) {
        sessions.set(call.session, id);
        opened.push({ route: call.route, path: call.exchange.request.path, id, headers: mcpHeaders(call.headers), keysTo: call.keysTo });
      }
    }
    const kept = keptOf(fresh, call);
    out.set(call, opts.scrub ? opts.scrub.exchange(kept) : kept);
  }
  for (const s of opened) {
    try {
      const url = upstreamUrl(s.route, s.path, []);
      if (s.keysTo !== undefined && new URL(url).origin !== s.keysTo) continue;
      const res = await request(url, {
        method: 'DELETE',
        headers: { ...s.headers, 'mcp-session-id': s.id },
        dispatcher: opts.dispatcher,
      });
      await res.body.dump();
    } catch {
      // A server that is gone, or does not end sessions: nothing to clean up.
    }
  }
  return out;
}

interface Outgoing {
  route: Route;
  exchange: Exchange;
  headers: Record<string, string>;
  query: [string, string][];
  /** Another body than the recorded one (a session drift opens itself). */
  body?: unknown;
  /** The origin the keys in `headers` and `query` may go to, when there are any (`key-hosts.ts`). */
  keysTo?: string | undefined;
}

async function send(o: Outgoing, opts: SendOptions, session?: string): Promise<Exchange> {
  const ex = o.exchange;
  const headers = { ...o.headers };
  if (session !== undefined) headers['mcp-session-id'] = session;
  // The plan judged where this call goes: a key never leaves for anywhere else, whatever joins the URL.
  const url = upstreamUrl(o.route, ex.request.path, o.query);
  if (o.keysTo !== undefined && new URL(url).origin !== o.keysTo)
    throw new TapedeckError('INTERNAL', `drift would send a key to ${new URL(url).host}, not where it was planned to go`);
  // A body too large to hold goes from the tape's store, as a stream.
  const stored = o.body === undefined && ex.request.body.kind === 'file' ? ex.request.body : undefined;
  const body =
    stored !== undefined ? Buffer.alloc(0) : o.body === undefined ? decodeBody(ex.request.body) : Buffer.from(JSON.stringify(o.body));
  const req: ProxyRequest = {
    route: o.route,
    method: ex.request.method,
    path: ex.request.path,
    query: o.query,
    headers,
    body,
    startedAt: new Date(),
    offsetMs: ex.offsetMs,
    t0: performance.now(),
  };
  if (stored !== undefined) {
    const open = opts.openRecorded;
    if (open === undefined) throw new TapedeckError('INTERNAL', 'a request body stored apart reached drift without its store');
    req.large = { body: stored, open: () => open(stored) };
  }
  // Captured as the live forward captures a recording, and made into the record a tee would commit (the refreshed tape
  // is written through a tee, `refresh.ts`).
  const call = httpCall(req);
  const answer = await forwardAndCapture(req, discardSink(), {
    dispatcher: opts.dispatcher,
    call,
    ...(opts.spill ? { spill: opts.spill } : {}),
  });
  return { ...describeExchange(teeRecord(call, answer)), type: 'exchange', id: ex.id, seq: ex.seq };
}

/** What drift keeps of a fresh call: the keys it added are `[REDACTED]` again, as on the tape. */
function keptOf(fresh: Exchange, call: PlannedCall): Exchange {
  if (call.filled.headers.length === 0 && call.filled.query.length === 0) return fresh;
  const headers = { ...fresh.request.headers };
  for (const h of call.filled.headers) if (h in headers) headers[h] = REDACTED;
  const query = fresh.request.query.map(([k, v]): [string, string] => [k, call.filled.query.includes(k) ? REDACTED : v]);
  return { ...fresh, request: { ...fresh.request, headers, query } };
}

/** The headers an MCP request needs beside the session: accept, content type, protocol version, credentials. */
function mcpHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k !== 'mcp-session-id' && k !== 'content-length') out[k] = v;
  return out;
}

/** An `initialize` for a session the tape has none for, with the call's own headers. */
function initializeCall(call: PlannedCall): Outgoing {
  return {
    route: call.route,
    exchange: { ...call.exchange, request: { ...call.exchange.request, method: 'POST' } },
    headers: { ...mcpHeaders(call.headers), accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    query: call.query,
    keysTo: call.keysTo,
    body: {
      jsonrpc: '2.0',
      id: 'tapedeck-drift-initialize',
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'tapedeck-drift', version: VERSION } },
    },
  };
}

/** A sink that drops the answer: drift reads the captured exchange, nobody waits for the bytes. */
function discardSink(): ResponseSink {
  return {
    head: () => undefined,
    write: () => true,
    onDrain: () => undefined,
    end: () => undefined,
    cut: () => undefined,
    onClose: () => undefined,
  };
}
