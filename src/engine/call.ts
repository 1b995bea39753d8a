/**
 * A call: what came in to be answered, in the terms of the tape, whatever carried it. An HTTP request, one MCP
 * message (over Streamable HTTP, the legacy HTTP+SSE transport or stdio), or a WebSocket session's upgrade. A call
 * is made once, by its transport, when it arrives: where it sits on the tape's timeline, its route, and the request as
 * the tape records it (headers as they go on a tape, the body encoded once). Deciding, answering and writing all read
 * this one value; `record.ts` turns a call and its answer into the tape's record.
 */
import { isoTimestamp } from '../tape/timestamp.js';
import { roundMs } from '../tape/timing.js';
import type { Body, Exchange, RequestRecord } from '../tape/schema.js';
import type { WireText } from '../tape/store.js';

export type CallTransport = Exchange['transport'];

export interface Call {
  transport: CallTransport;
  /** The route prefix it came in on (`/openai`), or the stdio server's name. */
  route: string;
  /** The upstream the route names (a base URL, or the stdio command line), when there is one. */
  upstream?: string | undefined;
  /** Wall-clock start, as the tape writes it (ISO 8601). */
  startedAt: string;
  /** Its start on the tape's timeline (ms since the tape's session began). */
  offsetMs: number;
  /** `performance.now()` when it arrived: durations count from here. */
  t0: number;
  /** The request as the tape records it. */
  request: RequestRecord;
  /** The text its JSON body came as, tied to that body (see `WireText`). */
  requestBodyText?: WireText<Body> | undefined;
}

/** Where and when a call arrived: the parts of a call its transport knows before the request. */
export interface Arrival {
  startedAt: Date;
  offsetMs: number;
  t0: number;
}

/** A call from its arrival and its request record (headers already as a tape keeps them). */
export function callOf(transport: CallTransport, route: string, upstream: string | undefined, at: Arrival, request: RequestRecord): Call {
  return { transport, route, upstream, startedAt: isoTimestamp(at.startedAt), offsetMs: roundMs(at.offsetMs), t0: at.t0, request };
}

/** ms since the call arrived, rounded as the tape writes durations. */
export function elapsedSince(call: Pick<Call, 't0'>, now = performance.now()): number {
  return roundMs(now - call.t0);
}
