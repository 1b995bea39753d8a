/** The seam between the upgrade listener (which resolves the route) and what record or replay does with a session. */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HeaderMap, Route } from '../../tape/schema.js';

/** A WebSocket upgrade request, resolved to its route: the session's request. */
export interface WsUpgrade {
  route: Route;
  /** Path below the route prefix, e.g. `/v1/realtime`. */
  path: string;
  query: [string, string][];
  /** The query string exactly as received (without `?`), when there was one: what is sent upstream. */
  rawQuery?: string;
  /** Lower-case header names, as received (secrets included: redaction happens when the tape is written). */
  headers: HeaderMap;
  startedAt: Date;
  /** Offset of the upgrade request on the tape's timeline (ms). */
  offsetMs: number;
  /** `performance.now()` at arrival: frame offsets count from here. */
  t0: number;
  /** What `node:http` handed over: the request, its socket, and bytes already read past the head. */
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
}

/** What a mode does with sessions: record them (relay), or play them from the tape. */
export interface SessionHandler {
  handle(up: WsUpgrade): void;
  /** On stop: close every open session (1001, going away); each still writes its end. */
  closeAll(): void;
}
