/** Answering on a raw socket (an upgrade or a CONNECT request) with plain HTTP: an error, or what the upstream answered instead of switching. */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorText, type ErrorAnswer } from '../providers/errors.js';

/** Refuse an upgrade or CONNECT request with an error answer (rendered by `providers/errors.ts`), then close the connection. */
export function refuseRaw(socket: Duplex, answer: ErrorAnswer): void {
  answerRaw(socket, answer.status, answer.headers, errorText(answer));
}

/** Write a whole HTTP/1.1 response on the raw socket of an upgrade request, then close the connection. */
export function answerRaw(socket: Duplex, status: number, headers: Record<string, string>, body: Buffer | string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}`];
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (name === 'content-length' || name === 'transfer-encoding' || name === 'connection') continue;
    for (const one of v.split('\n')) lines.push(`${k}: ${one}`);
  }
  lines.push(`content-length: ${bytes.byteLength}`, 'connection: close', '', '');
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n')), bytes]));
}
