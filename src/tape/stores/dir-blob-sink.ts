/**
 * A large body of a folder-store tape, written to its side folder as it streams: to a temporary file first (hashed
 * on the way), renamed to its hash at the end, so a reader never sees half a body under its final name.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { TapedeckError } from '../../errors.js';
import { storedBody } from '../exchange-encoder.js';
import type { BlobSink } from '../store.js';

/** A large body written to a temporary file in the side folder as it streams, hashed on the way, named by its hash at the end. */
export function dirBlobSink(side: string, name: string): BlobSink {
  mkdirSync(side, { recursive: true });
  const tmp = path.join(side, `.incoming-${randomBytes(6).toString('hex')}`);
  const fd = openSync(tmp, 'w');
  const hash = createHash('sha256');
  let bytes = 0;
  let open = true;
  const finish = (): void => {
    if (!open) return;
    open = false;
    closeSync(fd);
  };
  return {
    write(chunk) {
      if (!open) throw new TapedeckError('TAPE_CLOSED', `large body of tape "${name}" is already ended`);
      hash.update(chunk);
      let off = 0;
      while (off < chunk.byteLength) off += writeSync(fd, chunk, off, chunk.byteLength - off);
      bytes += chunk.byteLength;
    },
    async end(encoding) {
      finish();
      const sha256 = hash.digest('hex');
      const body = { ...storedBody(name, new Uint8Array(0), encoding, sha256), bytes };
      renameSync(tmp, path.join(side, path.basename(body.file)));
      return body;
    },
    abort() {
      finish();
      try {
        unlinkSync(tmp);
      } catch {
        // already gone
      }
    },
  };
}
