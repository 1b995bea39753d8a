/**
 * An upstream failure as an exchange records it (`error`: a stable code, the message, the phase it happened in). Its
 * own file because both halves of the live forward use it (`forward.ts` before the answer's head, `answer-stream.ts`
 * after), as does the WebSocket relay.
 */
import type { ExchangeError } from '../tape/schema.js';

export function toExchangeError(err: unknown, phase: ExchangeError['phase']): ExchangeError {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? (e.name === 'AbortError' ? 'CLIENT_CLOSED' : e.name) ?? 'ERROR';
  const message = e.message ?? String(err);
  return {
    code: String(code),
    message: e.cause?.message && !message.includes(e.cause.message) ? `${message}: ${e.cause.message}` : message,
    phase,
  };
}
