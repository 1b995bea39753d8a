/**
 * AWS Signature Version 4 for a forwarded request. An AWS SDK signs its request for the host and path it sends it to
 * (tapedeck's route), so the signature cannot hold at the real upstream: tapedeck signs it again, for the upstream's
 * host and path, with AWS credentials from its own environment, found as the AWS SDKs find them (the standard
 * variables, `AWS_PROFILE` and the shared files, SSO, a credential process, web identity, the container and instance
 * metadata: `@aws-sdk/credential-provider-node`), and the AWS SDK's own signer (`@smithy/signature-v4`). The client's
 * signature, date and token are dropped first; none of them, nor tapedeck's, is ever written to a tape (the tape
 * records the request as the client sent it, redacted).
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Hash } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { TapedeckError } from '../errors.js';
import type { HeaderMap } from '../tape/schema.js';

/** What a signer signs: the request as it goes to the upstream. */
export interface SignableRequest {
  method: string;
  /** The upstream URL, path and query included. */
  url: URL;
  /** The headers to send (lower-case names). */
  headers: HeaderMap;
  body: Uint8Array;
}

export interface SigV4Options {
  /** The signing name of the service (`bedrock` for Bedrock Runtime). */
  service: string;
  /** The environment the region is read from when the host does not say (`AWS_REGION`, `AWS_DEFAULT_REGION`). */
  env?: NodeJS.ProcessEnv;
  /** Credentials (default: the AWS SDKs' chain, as above). */
  credentials?: AwsCredentialIdentityProvider;
}

/** The headers a client's own signature is made of: dropped before the request is signed again. */
const CLIENT_SIGNATURE = ['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256'];

/** The region of an AWS host (`bedrock-runtime.us-east-1.amazonaws.com`, `...vpce.amazonaws.com` aside). */
export function regionOfHost(host: string): string | undefined {
  const m = /^[a-z0-9-]+(?:-fips)?\.([a-z]{2}(?:-gov|-iso[a-z]*)?-[a-z]+-\d)\.amazonaws\.com(?:\.cn)?$/i.exec(host);
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

export interface SigV4Signer {
  /** The headers to send upstream: the client's signature dropped, this request signed for `url`. */
  sign(req: SignableRequest): Promise<HeaderMap>;
}

/** A signer for one service. Credentials are looked up on the first request that needs them (and cached by the chain). */
export function createSigV4Signer(opts: SigV4Options): SigV4Signer {
  const env = opts.env ?? process.env;
  let provider: AwsCredentialIdentityProvider | undefined = opts.credentials;
  const credentials = async (url: URL): Promise<AwsCredentialIdentity> => {
    provider ??= defaultProvider();
    try {
      return await provider();
    } catch (err) {
      // The chain's error names its last step (the instance metadata); the line the user needs says what to set.
      provider = undefined;
      throw missingAwsCredentials(url, err);
    }
  };
  return {
    async sign(req) {
      const region = regionOfHost(req.url.hostname) ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
      if (region === undefined || region === '')
        throw new TapedeckError(
          'MISSING_CREDENTIALS',
          `tapedeck cannot tell the AWS region of ${req.url.host}: set AWS_REGION in tapedeck's environment`,
        );
      const creds = await credentials(req.url);
      const signer = new SignatureV4({ service: opts.service, region, credentials: creds, sha256: Hash.bind(null, 'sha256') });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (!CLIENT_SIGNATURE.includes(k)) headers[k] = v;
      headers.host = req.url.host;
      const query: Record<string, string | string[]> = {};
      for (const [k, v] of req.url.searchParams) {
        const had = query[k];
        query[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
      }
      const signed = await signer.sign({
        method: req.method,
        protocol: req.url.protocol,
        hostname: req.url.hostname,
        port: req.url.port === '' ? undefined : Number(req.url.port),
        // The path as it is sent: already escaped once, as AWS's canonical request for Bedrock wants it escaped again.
        path: req.url.pathname,
        query,
        headers,
        body: req.body,
      });
      return signed.headers;
    },
  };
}
