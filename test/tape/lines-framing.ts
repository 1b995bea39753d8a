/**
 * A made-up framing for tests (one JSON object a line, `application/x-test-lines`), the smallest a provider could add:
 * it runs the framing contract beside SSE, and the proxy's tests use it to show that a framing registered alone is
 * recorded, replayed, paced, cut by a fault and stored apart like SSE is.
 */
import type { StreamEvent, StreamFraming } from '../../src/tape/framing/framing.js';
import { StringDecoder } from 'node:string_decoder';

export const LINES_TYPE = 'application/x-test-lines';

export const linesFraming: StreamFraming = {
  name: 'test-lines',
  accepts: (type) => type.toLowerCase().startsWith(LINES_TYPE),
  decoder() {
    const text = new StringDecoder('utf8');
    let held = '';
    const split = (more: string): StreamEvent[] => {
      held += more;
      const out: StreamEvent[] = [];
      for (let nl = held.indexOf('\n'); nl !== -1; nl = held.indexOf('\n')) {
        out.push({ offsetMs: 0, data: held.slice(0, nl) });
        held = held.slice(nl + 1);
      }
      return out;
    };
    return {
      feed: (bytes) => split(text.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))),
      end: () => split(text.end()),
      rest: () => held,
    };
  },
  encode: (ev) => `${ev.data}\n`,
};
