/**
 * Bodies too large to hold in memory: above {@link STREAMED_BODY_BYTES} a request or response body goes to the
 * store's blob sink as it streams (hashed on the way), is forwarded from the store, and is stored exactly as it came
 * (text when it is UTF-8 text, else binary; never parsed as JSON). Its exact-match key is its sha256: a body that
 * large is an upload, not an LLM or MCP request whose fields would need normalising.
 *
 * Below the limit nothing changes: the body is read whole, described (model, tool) and matched by its meaning, and
 * stored apart only when it exceeds the tape's side-file threshold (1 MiB), as always. The limit sits well above
 * the largest LLM requests in practice (several inline images).
 */
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { TapedeckError } from '../errors.js';
import { isTextualContentType } from './body.js';
import type { StoredBody } from './store.js';

/** Bodies above this many bytes stream to the store instead of being held in memory. */
export const STREAMED_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Checks that a stream of bytes is UTF-8 text, chunk by chunk, without decoding it: a character split between two
 * chunks is carried over to the next one.
 */
export class Utf8Check {
  private carry: Buffer = Buffer.alloc(0);
  private ok = true;

  push(chunk: Uint8Array): void {
    if (!this.ok) return;
    const buf =
      this.carry.byteLength > 0 ? Buffer.concat([this.carry, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const cut = incompleteTail(buf);
    this.carry = Buffer.from(buf.subarray(buf.byteLength - cut));
    this.ok = isUtf8(buf.subarray(0, buf.byteLength - cut));
  }

  /** True when every byte pushed was UTF-8 text (and none is left dangling). */
  get valid(): boolean {
    return this.ok && this.carry.byteLength === 0;
  }
}

/** How many bytes at the end of `buf` start a UTF-8 character that continues in the next chunk (0..3). */
function incompleteTail(buf: Buffer): number {
  for (let back = 1; back <= Math.min(3, buf.byteLength); back++) {
    const b = buf[buf.byteLength - back] as number;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/** How a streamed body is stored: as text when it is UTF-8 and its content type (if any) names text; else binary. */
export function streamedEncoding(contentType: string | undefined, utf8: boolean): StoredBody['encoding'] {
  return utf8 && (contentType === undefined || isTextualContentType(contentType)) ? 'text' : 'base64';
}

/**
 * The bytes of a stored body as a stream, checked against its recorded size and sha256 as they pass: a mismatch
 * fails the stream at its end (TAPE_CORRUPT), as `readBlob` would. The last chunk is held back until the check has
 * passed, so whoever serves the stream as it comes (replay reads side files only when it serves them) never sends a
 * whole answer that was not what was recorded: a client of a damaged one misses its end, and sees the answer cut.
 */
export function verifiedBlobStream(
  open: () => Promise<AsyncIterable<Uint8Array> | Iterable<Uint8Array>>,
  body: StoredBody,
  where: string,
): Readable {
  return Readable.from(
    (async function* () {
      const hash = createHash('sha256');
      let bytes = 0;
      let held: Uint8Array | undefined;
      for await (const chunk of await open()) {
        hash.update(chunk);
        bytes += chunk.byteLength;
        if (held !== undefined) yield held;
        held = chunk;
      }
      const sha256 = hash.digest('hex');
      if (bytes !== body.bytes || sha256 !== body.sha256)
        throw new TapedeckError(
          'TAPE_CORRUPT',
          `stored body ${body.file} of ${where} is ${bytes} bytes with sha256 ${sha256.slice(0, 12)}..., recorded ${body.bytes} bytes, ${body.sha256.slice(0, 12)}...`,
        );
      if (held !== undefined) yield held;
    })(),
    { objectMode: false },
  );
}
