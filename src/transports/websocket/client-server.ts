/** The client side of every session: a `ws` server that never listens, handed upgrade requests one by one. */
import type { IncomingMessage } from 'node:http';
import { WebSocketServer } from 'ws';
import type { HeaderMap } from '../../tape/schema.js';
import { passedUpgradeHeaders } from './session-tape.js';

/** The subprotocol to answer a client's request with (the upstream's choice, or the recorded one). */
export const chosenProtocol = new WeakMap<IncomingMessage, string>();
/** Headers of the upstream's (or the recorded) 101 to pass on to the client. */
export const upgradeHeaders = new WeakMap<IncomingMessage, HeaderMap>();

/** Messages up to 256 MiB (the `ws` default is 100 MiB; audio sessions send large ones). */
export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

export function createClientServer(): WebSocketServer {
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: MAX_MESSAGE_BYTES,
    handleProtocols: (_offered, req) => chosenProtocol.get(req) ?? false,
  });
  wss.on('headers', (lines: string[], req: IncomingMessage) => {
    for (const [k, v] of Object.entries(passedUpgradeHeaders(upgradeHeaders.get(req) ?? {})))
      for (const one of v.split('\n')) if (!/[\r\n]/.test(one)) lines.push(`${k}: ${one}`);
  });
  return wss;
}
