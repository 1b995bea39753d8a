/**
 * The SigV4 signer tapedeck signs forwarded AWS requests with: what it signs passes the scripted Bedrock upstream's
 * check (AWS's own algorithm, for the upstream's host), the client's signature is dropped, credentials come from the
 * AWS SDKs' chain (here the standard variables), and without any the error is one line saying what to set.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/providers/signing.js';
import { regionOfHost, sigv4Signer } from '../../src/providers/sigv4.js';
import { signerContract } from './signer-contract.js';
import { sigv4Error } from '../helpers/bedrock-upstream.js';

const creds = { accessKeyId: 'AKIDTAPEDECKTEST', secretAccessKey: 'tapedeck-test-secret-key', sessionToken: 'tapedeck-test-session' };
const saved: Record<string, string | undefined> = {};
const vars = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
  'AWS_REGION',
  'AWS_EC2_METADATA_DISABLED',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_CONFIG_FILE',
];
beforeAll(() => {
  for (const v of vars) saved[v] = process.env[v];
});
afterEach(() => {
  for (const v of vars)
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
});
afterAll(() => undefined);

const url = new URL('http://127.0.0.1:4599/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse');
const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] }));
// As the AWS SDK sends it to tapedeck: signed for tapedeck's host with the client's own (other) credentials.
const clientHeaders = {
  'content-type': 'application/json',
  authorization:
    'AWS4-HMAC-SHA256 Credential=AKIDCLIENT/20261128/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=' +
    '0'.repeat(64),
  'x-amz-date': '20261128T000000Z',
  'x-amz-security-token': 'client-token',
  'amz-sdk-invocation-id': 'abc',
};

signerContract(sigv4Signer({ service: 'bedrock', env: { AWS_REGION: 'us-east-1' }, credentials: async () => creds }), {
  request: { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
  signsBody: true,
  signsStreamedBody: true,
});

describe('SigV4 re-signing', () => {
  it('signs for the upstream host with credentials from the environment (the AWS SDK chain), as AWS checks them', async () => {
    process.env.AWS_ACCESS_KEY_ID = creds.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = creds.secretAccessKey;
    process.env.AWS_SESSION_TOKEN = creds.sessionToken;
    const signer = sigv4Signer({ service: 'bedrock', env: { AWS_REGION: 'us-east-1' } });
    const { headers } = await signRequest(signer, { method: 'POST', url, headers: clientHeaders, body });
    expect(headers.authorization).toContain(`Credential=${creds.accessKeyId}/`);
    expect(headers['x-amz-security-token']).toBe(creds.sessionToken);
    expect(headers.host).toBeUndefined();
    const sent = { method: 'POST', path: `${url.pathname}${url.search}`, headers: { ...headers, host: url.host }, body };
    expect(await sigv4Error(sent, '127.0.0.1:4599', creds, 'us-east-1')).toBeUndefined();
    // The check is real: another body, host or region fails it.
    expect(await sigv4Error({ ...sent, body: Buffer.from('{}') }, '127.0.0.1:4599', creds, 'us-east-1')).toMatch(
      /does not match|is not the body/,
    );
    expect(await sigv4Error(sent, '127.0.0.1:4600', creds, 'us-east-1')).toMatch(/is not 127\.0\.0\.1:4600/);
    expect(await sigv4Error(sent, '127.0.0.1:4599', creds, 'eu-west-1')).toMatch(/signed for us-east-1/);
    // The client's own signature is what the check refuses.
    expect(
      await sigv4Error({ ...sent, headers: { ...clientHeaders, host: '127.0.0.1:4599' } }, '127.0.0.1:4599', creds, 'us-east-1'),
    ).toMatch(/unknown access key AKIDCLIENT/);
  });

  it('reads the region from an AWS host, else AWS_REGION', async () => {
    expect(regionOfHost('bedrock-runtime.us-west-2.amazonaws.com')).toBe('us-west-2');
    expect(regionOfHost('bedrock-runtime-fips.us-gov-west-1.amazonaws.com')).toBe('us-gov-west-1');
    expect(regionOfHost('127.0.0.1')).toBeUndefined();
    const signer = sigv4Signer({ service: 'bedrock', env: {}, credentials: async () => creds });
    const { headers } = await signer.sign({
      method: 'POST',
      url: new URL('https://bedrock-runtime.eu-central-1.amazonaws.com/model/m/converse'),
      headers: {},
      body,
    });
    expect(headers.authorization).toContain('/eu-central-1/bedrock/aws4_request');
    await expect(signer.sign({ method: 'POST', url, headers: {}, body })).rejects.toThrow(/set AWS_REGION/);
  });

  it('without credentials, says in one line which variables to set', async () => {
    for (const v of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) delete process.env[v];
    // No instance metadata lookup from a test (it would leave loopback); no shared files.
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
    process.env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent/credentials';
    process.env.AWS_CONFIG_FILE = '/nonexistent/config';
    const signer = sigv4Signer({ service: 'bedrock', env: { AWS_REGION: 'us-east-1' } });
    const err = await signRequest(signer, { method: 'POST', url, headers: clientHeaders, body }).catch((e: unknown) => e as Error);
    expect((err as { code?: string }).code).toBe('MISSING_CREDENTIALS');
    expect((err as Error).message).toMatch(
      /^tapedeck needs AWS credentials to sign requests to 127\.0\.0\.1:4599: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    );
    expect((err as Error).message).not.toContain('\n');
  });
});
