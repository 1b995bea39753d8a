/**
 * A made-up request signer for tests, shaped like AWS SigV4 and much smaller: an HMAC over the method, the URL, the
 * host, the date and the body's hash, in `authorization`, with the date and the hash in headers of their own. It runs
 * the signer contract (`signer-contract.ts`), and `signing.test.ts` puts it on a provider whose upstream checks every
 * signature, as Bedrock's does.
 */
import { createHash, createHmac } from 'node:crypto';
import type { RequestSigner } from '../../src/providers/signing.js';

export const SIGNATURE_HEADERS = ['authorization', 'x-test-date', 'x-test-content-sha256'] as const;
const UNSIGNED = 'UNSIGNED-PAYLOAD';

function stringToSign(method: string, url: URL, date: string, hash: string): string {
  return [method, `${url.pathname}${url.search}`, url.host, date, hash].join('\n');
}

/** A signer with this secret (what tapedeck holds; the client's is another). */
export function hmacSigner(secret: string, keyId = 'tapedeck'): RequestSigner {
  return {
    name: 'test-hmac',
    signatureHeaders: SIGNATURE_HEADERS,
    async sign(request, opts = {}) {
      const date = (opts.signingDate ?? new Date()).toISOString();
      const hash = request.body === undefined ? UNSIGNED : createHash('sha256').update(request.body).digest('hex');
      const signature = createHmac('sha256', secret)
        .update(stringToSign(request.method, request.url, date, hash))
        .digest('hex');
      return {
        ...request,
        headers: {
          ...request.headers,
          authorization: `TEST-HMAC key=${keyId}, signature=${signature}`,
          'x-test-date': date,
          'x-test-content-sha256': hash,
        },
      };
    },
  };
}

/** Whether a request that reached an upstream carries a valid signature by `secret` over what arrived. */
export function verifyHmac(
  secret: string,
  req: { method: string; url: URL; headers: Record<string, string | string[] | undefined>; body: Buffer },
): boolean {
  const h = (name: string): string => String(req.headers[name] ?? '');
  const hash = h('x-test-content-sha256');
  if (hash !== UNSIGNED && hash !== createHash('sha256').update(req.body).digest('hex')) return false;
  const expected = createHmac('sha256', secret)
    .update(stringToSign(req.method, req.url, h('x-test-date'), hash))
    .digest('hex');
  return h('authorization').endsWith(`signature=${expected}`);
}
