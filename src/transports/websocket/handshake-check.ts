/**
 * A client's WebSocket handshake checked the way `ws` checks it when tapedeck accepts the client (`handleUpgrade`):
 * GET, a `Sec-WebSocket-Key` of 16 bytes in base64, version 13 (or 8), a well-formed subprotocol list. Done when the
 * upgrade arrives, before a session is relayed or played, so that a handshake the client side would refuse never
 * opens a live upstream session (a connection, a billed session) only to answer the client 400 afterwards.
 */
import type { IncomingMessage } from 'node:http';
import { TapedeckError } from '../../errors.js';

/** `ws`'s own test of the key: 16 bytes, base64. */
const KEY = /^[+/0-9A-Za-z]{22}==$/;
/** A subprotocol is an RFC 7230 token; entries are separated by commas with optional spaces and tabs. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Why the handshake would be refused (status 400, or 405 for a method other than GET), or undefined when it is sound. */
export function handshakeProblem(req: IncomingMessage): TapedeckError | undefined {
  const bad = (what: string, headers?: Record<string, string>): TapedeckError =>
    new TapedeckError('BAD_REQUEST', `tapedeck: not a valid WebSocket handshake: ${what}`, headers ? { headers } : {});
  if (req.method !== 'GET')
    return new TapedeckError(
      'METHOD_NOT_ALLOWED',
      `tapedeck: not a valid WebSocket handshake: the method is ${req.method ?? '?'}, not GET`,
      {
        headers: { allow: 'GET' },
      },
    );
  const key = req.headers['sec-websocket-key'];
  if (key === undefined || !KEY.test(key)) return bad(`${key === undefined ? 'no' : 'an invalid'} Sec-WebSocket-Key (16 bytes in base64)`);
  const version = req.headers['sec-websocket-version'];
  if (version !== '13' && version !== '8')
    return bad(`Sec-WebSocket-Version ${version === undefined ? 'missing' : JSON.stringify(version)} (13 is supported)`, {
      'sec-websocket-version': '13, 8',
    });
  const protocols = req.headers['sec-websocket-protocol'];
  if (protocols !== undefined) {
    const names = protocols.split(',').map((p) => p.replace(/^[ \t]+|[ \t]+$/g, ''));
    if (!names.every((n) => TOKEN.test(n))) return bad('a malformed Sec-WebSocket-Protocol list');
    if (new Set(names).size !== names.length) return bad('a subprotocol offered twice in Sec-WebSocket-Protocol');
  }
  return undefined;
}
