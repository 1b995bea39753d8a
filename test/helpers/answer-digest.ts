/** A response read to its end without holding it: status, tapedeck's match header, sha256 and length of its bytes. */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface AnswerDigest {
  status: number;
  match: string | undefined;
  sha256: string;
  bytes: number;
}

export function answerDigest(res: IncomingMessage): Promise<AnswerDigest> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    let bytes = 0;
    res.on('data', (c: Buffer) => {
      hash.update(c);
      bytes += c.byteLength;
    });
    res.on('end', () =>
      resolve({
        status: res.statusCode ?? 0,
        match: res.headers['x-tapedeck-match'] as string | undefined,
        sha256: hash.digest('hex'),
        bytes,
      }),
    );
    res.on('error', reject);
  });
}
