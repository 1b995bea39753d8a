/** Small pieces every WebSocket session path shares: its tape, its headers each way, how a close is passed on. */
import { WebSocket } from 'ws';
import type { EndLine, HeaderMap, WsFrame } from '../../tape/schema.js';
import type { OpenExchange } from '../../tape/store.js';
import { tapeHeaders, upstreamRequestHeaders } from '../../http/headers.js';

/** A session's place on the tape: frames are added in call order even before its exchange line is written. */
export interface SessionTape {
  /**
   * Resolves once the frame is on the tape; rejects when it cannot be written. A frame still being made (a large
   * message being stored) keeps its place: the frames added after it wait for it.
   */
  add(frame: WsFrame | Promise<WsFrame>): Promise<void>;
  end(final: Omit<EndLine, 'type' | 'exchange'>): Promise<void>;
  /** The id of the session's exchange, once written. */
  readonly id: Promise<string>;
}

/** `opened`: the session's first record, begun by its tee (`Tee.begin`). */
export function sessionTape(opened: Promise<OpenExchange>): SessionTape {
  opened.catch(() => undefined);
  // The last frame handed over (or failed): the next one is handed over after it.
  let last: Promise<unknown> = opened;
  return {
    add(frame) {
      let stored: Promise<void> | undefined;
      const handed = Promise.all([opened, frame, last]).then(([o, f]) => {
        stored = o.addFrames([f]);
      });
      last = handed.catch(() => undefined);
      return handed.then(() => stored);
    },
    // After every frame added before it is handed over.
    end: (final) => Promise.all([opened, last]).then(([o]) => o.end(final)),
    id: opened.then((o) => o.exchange.id),
  };
}

/** Per connection, never on the tape nor passed on: the handshake's key and accept, and the extensions negotiated per hop. */
const HANDSHAKE = new Set(['sec-websocket-key', 'sec-websocket-accept', 'sec-websocket-extensions', 'sec-websocket-version']);

/** Upgrade request or 101 headers as they go on the tape (no hop-by-hop, no per-connection handshake values). */
export function wsTapeHeaders(headers: HeaderMap): HeaderMap {
  const out = tapeHeaders(headers);
  for (const k of HANDSHAKE) delete out[k];
  return out;
}

/** The client's headers to open the upstream session with (the WebSocket client sets the handshake's own). */
export function wsUpstreamHeaders(headers: HeaderMap): Record<string, string> {
  const out = upstreamRequestHeaders(headers);
  for (const k of HANDSHAKE) delete out[k];
  delete out['sec-websocket-protocol'];
  delete out['accept-encoding'];
  return out;
}

/** 101 headers from the upstream worth passing to the client (request ids, rate limits), not the handshake's own. */
export function passedUpgradeHeaders(headers: HeaderMap): HeaderMap {
  const out = wsTapeHeaders(headers);
  delete out['sec-websocket-protocol'];
  delete out['content-length'];
  delete out['date'];
  return out;
}

/** The subprotocols a client asked for (`Sec-WebSocket-Protocol: a, b`). */
export function requestedProtocols(headers: HeaderMap): string[] {
  return (headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** Pass a close on: the same code and reason where a close frame may carry them; a dropped connection is dropped. */
export function closeWith(ws: WebSocket, code: number | undefined, reason: Buffer | string = ''): void {
  if (ws.readyState === WebSocket.CLOSED) return;
  if (code === 1006) return ws.terminate();
  if (code === undefined || code === 1005 || !sendable(code)) return ws.close();
  ws.close(code, typeof reason === 'string' ? reason : reason.toString('utf8'));
}

/** Codes a close frame may carry (RFC 6455 7.4; ws refuses the rest). */
function sendable(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}
