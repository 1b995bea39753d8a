/**
 * AWS Bedrock Runtime, shared by its two APIs' adapters (Converse in `bedrock-converse.ts`, InvokeModel in
 * `bedrock-invoke.ts`): the model is in the path (`/model/{modelId}/converse`), every request is signed (SigV4,
 * service `bedrock`: tapedeck signs a forwarded request again for the upstream, `../sigv4.ts`), streams are
 * AWS event-stream frames (`tape/framing/aws-eventstream.ts`), and errors are `{"message": ...}` with the exception's name in
 * `x-amzn-errortype`.
 */
import { sigv4Signer } from '../sigv4.js';
import type { ProviderInfo } from '../types.js';

export const BEDROCK: ProviderInfo = {
  name: 'bedrock',
  route: { prefix: '/bedrock', upstream: 'https://bedrock-runtime.us-east-1.amazonaws.com' },
  // No base-URL variable in wrapper mode: the forward proxy keeps the real host there, so the client's own signature
  // holds and nothing needs signing again (`AWS_ENDPOINT_URL_BEDROCK_RUNTIME` points an SDK at a `/bedrock` route).
  otelName: 'aws.bedrock',
  modelFamilies: [
    'anthropic.',
    'us.anthropic.',
    'eu.anthropic.',
    'apac.anthropic.',
    'amazon.',
    'us.amazon.',
    'meta.',
    'us.meta.',
    'mistral.',
    'cohere.',
    'ai21.',
  ],
  // Every request is signed: tapedeck signs a forwarded one again, with its own credentials, for the upstream.
  signer: sigv4Signer({ service: 'bedrock' }),
};

/** The Bedrock exception an HTTP status is, as the AWS SDKs name it (`x-amzn-errortype`). */
export const BEDROCK_EXCEPTION: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

const MODEL_IN_PATH = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/;

/** The operation a Bedrock Runtime path is (`converse`, `converse-stream`, `invoke`, `invoke-with-response-stream`). */
export function bedrockOperation(path: string): string | undefined {
  return MODEL_IN_PATH.exec(path)?.[2];
}

/** The model id of a Bedrock Runtime path, unescaped (`anthropic.claude-3-haiku-20240307-v1:0`). */
export function bedrockModel(path: string): string | undefined {
  const id = MODEL_IN_PATH.exec(path)?.[1];
  if (id === undefined) return undefined;
  try {
    return decodeURIComponent(id);
  } catch {
    return id;
  }
}

/** Bedrock's error body: the AWS SDKs read `message` (and the exception's name from the header or `__type`). */
export function bedrockErrorBody(status: number, _type: string, message: string, extra: Record<string, unknown>): unknown {
  return { message, __type: BEDROCK_EXCEPTION[status] ?? 'InternalServerException', ...extra };
}

/** The Bedrock API keys (`AWS_BEARER_TOKEN_BEDROCK`, a bearer token) beside SigV4. */
export const BEDROCK_CREDENTIALS = [{ env: ['AWS_BEARER_TOKEN_BEDROCK'], header: 'authorization', scheme: 'bearer' as const }];
