/**
 * AWS Signature Version 4 for a forwarded request (the signing seam, `signing.ts`). An AWS SDK signs its request for
 * the host and path it sends it to (tapedeck's route), so the signature cannot hold at the real upstream: tapedeck
 * signs it again, for the upstream's host and path, with AWS credentials from its own environment, found as the AWS
 * SDKs find them (the standard variables, `AWS_PROFILE` and the shared files, SSO, a credential process, web
 * identity, the container and instance metadata: `@aws-sdk/credential-provider-node`), with the AWS SDK's own signer
 * (`@smithy/signature-v4`). Neither the client's signature nor tapedeck's reaches a tape: the seam drops the client's
 * before signing, and the signature headers are redacted on every tape.
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Hash } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { TapedeckError } from '../errors.js';
import type { RequestSigner } from './signing.js';

export interface SigV4Options {
  /** The signing name of the service (`bedrock` for Bedrock Runtime). */
  service: string;
  /** Where the region is read when the host does not say it (`AWS_REGION`, `AWS_DEFAULT_REGION`); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Credentials; default: the AWS SDKs' chain, looked up on the first request that needs them. */
  credentials?: AwsCredentialIdentityProvider;
}

/** The region of an AWS host (`bedrock-runtime.us-east-1.amazonaws.com` -> `us-east-1`). */
export function regionOfHost(host: string): string | undefined {
  const m = /^[a-z0-9-]+?(?:-fips)?\.([a-z]{2}(?:-gov|-iso[a-z]*)?-[a-z]+-\d)\.amazonaws\.com(?:\.cn)?$/i.exec(host);
  return m?.[1]?.toLowerCase();
}

/** One line that says how to give tapedeck AWS credentials. */
export function missingAwsCredentials(url: URL, cause?: unknown): TapedeckError {
  return new TapedeckError(
    'MISSING_CREDENTIALS',
    `tapedeck needs AWS credentials to sign requests to ${url.host}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or AWS_PROFILE with ~/.aws/credentials, in tapedeck's environment`,
    { cause },
  );
}

export function sigv4Signer(opts: SigV4Options): RequestSigner {
  let provider = opts.credentials;
  const credentials = async (url: URL): Promise<AwsCredentialIdentity> => {
    provider ??= defaultProvider();
    try {
      return await provider();
    } catch (err) {
      // The chain's own error names its last step (the instance metadata); the user needs to know what to set.
      if (opts.credentials === undefined) provider = undefined;
      throw missingAwsCredentials(url, err);
    }
  };
  return {
    name: 'sigv4',
    signatureHeaders: ['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256'],
    // The signing time and the body's SHA-256 are no secret (anyone with the body computes the hash): readable on a
    // tape. The signature (`authorization`) and the session token are redacted.
    readableHeaders: ['x-amz-date', 'x-amz-content-sha256'],
    async sign(request, signOpts) {
      const env = opts.env ?? process.env;
      const url = request.url;
      const region = regionOfHost(url.hostname) ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
      if (region === undefined || region === '')
        throw new TapedeckError(
          'MISSING_CREDENTIALS',
          `tapedeck cannot tell the AWS region of ${url.host}: set AWS_REGION in tapedeck's environment`,
        );
      const creds = await credentials(url);
      const signer = new SignatureV4({ service: opts.service, region, credentials: creds, sha256: Hash.bind(null, 'sha256') });
      const headers: Record<string, string> = { ...request.headers, host: url.host };
      // A body too large to hold goes upstream as a stream: signed as an unsigned payload (SigV4 allows it).
      if (request.body === undefined) headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      const query: Record<string, string | string[]> = {};
      for (const [k, v] of url.searchParams) {
        const had = query[k];
        query[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
      }
      const signed = await signer.sign(
        {
          method: request.method,
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port === '' ? undefined : Number(url.port),
          // The path as it is sent (already escaped once): SigV4 escapes it again, as AWS does when it checks.
          path: url.pathname,
          query,
          headers,
          body: request.body,
        },
        signOpts?.signingDate === undefined ? {} : { signingDate: signOpts.signingDate },
      );
      // `host` is signed as the upstream's, and sent as the request's URL says (the forward sets it): not a header here.
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(signed.headers)) if (k.toLowerCase() !== 'host') out[k.toLowerCase()] = String(v);
      return { method: request.method, url, headers: out, body: request.body };
    },
  };
}
