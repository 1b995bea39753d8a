/**
 * Completing the client's handshake, which relay and replay both do once they know what the 101 says: a client that
 * went away before (or during) it is `undefined`, an ordinary end of the session rather than an error.
 */
import type { WebSocket, WebSocketServer } from 'ws';
import type { WsUpgrade } from './types.js';

/** The client's side of the session, or undefined when its socket closed first. */
export function acceptClient(wss: WebSocketServer, up: WsUpgrade): Promise<WebSocket | undefined> {
  return new Promise<WebSocket | undefined>((resolve) => {
    if (up.socket.destroyed) return resolve(undefined);
    up.socket.once('close', () => resolve(undefined));
    wss.handleUpgrade(up.req, up.socket, up.head, (ws) => resolve(ws));
  });
}
