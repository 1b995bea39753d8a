/**
 * A scripted AWS Bedrock Runtime on 127.0.0.1, port 0: Converse, ConverseStream, InvokeModel and
 * InvokeModelWithResponseStream, streams as binary event-stream frames. Like AWS, it checks every request's SigV4
 * signature for its own host (`127.0.0.1:PORT`), path, query, signed headers and body, with the credentials it was given
 * (the ones tapedeck has in its environment, never the client's), and answers 403 `InvalidSignatureException` otherwise.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';
import { fromUtf8, Hash, toUtf8 } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';
import { readBody, startLocalServer } from './local-server.js';

export interface AwsTestCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface BedrockRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** Why its signature failed, if it did. */
  signatureError?: string;
}

export interface BedrockUpstream {
  url: string;
  requests: BedrockRequest[];
  close(): Promise<void>;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event-stream frame with string headers. */
export function frame(headers: Record<string, string>, payload: unknown): Uint8Array {
  const h: MessageHeaders = {};
  for (const [k, v] of Object.entries(headers)) h[k] = { type: 'string', value: v };
  return codec.encode({ headers: h, body: Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)) });
}

const event = (type: string, payload: unknown): Uint8Array =>
  frame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);

/** Why a request's SigV4 signature does not hold for `host` and `creds`, or undefined when it does. */
export async function sigv4Error(
  req: { method: string; path: string; headers: IncomingMessage['headers']; body: Buffer },
  host: string,
  creds: AwsTestCredentials,
  region: string,
): Promise<string | undefined> {
  const auth = String(req.headers.authorization ?? '');
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return 'no SigV4 Authorization header';
  const [, akid, , reqRegion, service, signedHeaders, signature] = m;
  if (akid !== creds.accessKeyId) return `unknown access key ${akid}`;
  if (reqRegion !== region || service !== 'bedrock') return `signed for ${reqRegion}/${service}`;
  const names = signedHeaders!.split(';');
  if (!names.includes('host')) return 'host is not signed';
  if (req.headers.host !== host) return `Host ${req.headers.host} is not ${host}`;
  if (creds.sessionToken !== undefined && req.headers['x-amz-security-token'] !== creds.sessionToken) return 'wrong session token';
  const declared = req.headers['x-amz-content-sha256'];
  if (typeof declared === 'string' && declared !== createHash('sha256').update(req.body).digest('hex'))
    return 'x-amz-content-sha256 is not the body';
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!date) return 'no x-amz-date';
  const signingDate = new Date(`${date[1]}-${date[2]}-${date[3]}T${date[4]}:${date[5]}:${date[6]}Z`);
  const headers: Record<string, string> = {};
  for (const n of names) {
    const v = req.headers[n];
    if (v === undefined) return `signed header ${n} is missing`;
    headers[n] = Array.isArray(v) ? v.join(',') : v;
  }
  const q = req.path.indexOf('?');
  const query: Record<string, string> = {};
  if (q !== -1) for (const [k, v] of new URLSearchParams(req.path.slice(q + 1))) query[k] = v;
  const signer = new SignatureV4({ service: 'bedrock', region, credentials: creds, sha256: Hash.bind(null, 'sha256') });
  const expected = await signer.sign(
    {
      method: req.method,
      protocol: 'http:',
      hostname: host.split(':')[0]!,
      path: q === -1 ? req.path : req.path.slice(0, q),
      query,
      headers,
      body: req.body,
    },
    { signingDate, unsignableHeaders: new Set(), signableHeaders: new Set(names) },
  );
  const got = /Signature=([0-9a-f]{64})/.exec(String(expected.headers.authorization))?.[1];
  return got === signature ? undefined : 'The request signature we calculated does not match the signature you provided';
}

interface Said {
  text: string;
  model: string;
}

function said(path: string, body: unknown): Said {
  const model = decodeURIComponent(/^\/model\/([^/]+)\//.exec(path)?.[1] ?? '');
  const b = body as { messages?: { content?: unknown }[] };
  const content = b.messages?.[0]?.content;
  const first = Array.isArray(content) ? (content[0] as { text?: string }).text : content;
  return { text: String(first ?? ''), model };
}

/** The answer's words, one event each: "You asked: TEXT". */
const words = (s: Said): string[] => `You asked: ${s.text}`.split(/(?<= )/);

function converse(s: Said): unknown {
  return {
    output: { message: { role: 'assistant', content: [{ text: words(s).join('') }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: 12, outputTokens: words(s).length, totalTokens: 12 + words(s).length },
    metrics: { latencyMs: 42 },
  };
}

function converseStream(s: Said): Uint8Array[] {
  return [
    event('messageStart', { role: 'assistant' }),
    ...words(s).map((w) => event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: w } })),
    event('contentBlockStop', { contentBlockIndex: 0 }),
    event('messageStop', { stopReason: 'end_turn' }),
    event('metadata', {
      usage: { inputTokens: 12, outputTokens: words(s).length, totalTokens: 12 + words(s).length },
      metrics: { latencyMs: 42 },
    }),
  ];
}

/** InvokeModel with an Anthropic body: the Messages API's answer. */
function anthropicMessage(s: Said): unknown {
  return {
    id: 'msg_bdrk_1',
    type: 'message',
    role: 'assistant',
    model: s.model,
    content: [{ type: 'text', text: words(s).join('') }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: words(s).length },
  };
}

function anthropicStream(s: Said): Uint8Array[] {
  const chunk = (data: unknown): Uint8Array => event('chunk', { bytes: Buffer.from(JSON.stringify(data)).toString('base64') });
  return [
    chunk({
      type: 'message_start',
      message: { ...(anthropicMessage(s) as object), content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } },
    }),
    chunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...words(s).map((w) => chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: w } })),
    chunk({ type: 'content_block_stop', index: 0 }),
    chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: words(s).length } }),
    chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 12, outputTokenCount: words(s).length } }),
  ];
}

export async function startBedrockUpstream(creds: AwsTestCredentials, region = 'us-east-1'): Promise<BedrockUpstream> {
  const requests: BedrockRequest[] = [];
  let host = '';
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const path = req.url ?? '/';
    let body: unknown;
    try {
      body = raw.byteLength === 0 ? undefined : JSON.parse(raw.toString('utf8'));
    } catch {
      body = raw.toString('utf8');
    }
    const seen: BedrockRequest = { method: req.method ?? 'GET', path, headers: req.headers, body };
    requests.push(seen);
    const bad = await sigv4Error({ method: seen.method, path, headers: req.headers, body: raw }, host, creds, region);
    if (bad !== undefined) {
      seen.signatureError = bad;
      res.writeHead(403, {
        'content-type': 'application/json',
        'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/',
      });
      res.end(JSON.stringify({ message: bad }));
      return;
    }
    const s = said(path.split('?')[0]!, body);
    const op = /\/model\/[^/]+\/([a-z-]+)$/.exec(path.split('?')[0]!)?.[1];
    const json = (b: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': `req-${requests.length}` });
      res.end(JSON.stringify(b));
    };
    const stream = async (frames: Uint8Array[]): Promise<void> => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': `req-${requests.length}` });
      for (const f of frames) await new Promise<void>((resolve) => res.write(f, () => resolve()));
      res.end();
    };
    if (op === 'converse') json(converse(s));
    else if (op === 'converse-stream') await stream(converseStream(s));
    else if (op === 'invoke') json(anthropicMessage(s));
    else if (op === 'invoke-with-response-stream') await stream(anthropicStream(s));
    else {
      res.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'UnknownOperationException' });
      res.end(JSON.stringify({ message: `unknown operation ${path}` }));
    }
  };
  const server = await startLocalServer((req, res) => void answer(req, res));
  host = `127.0.0.1:${server.port}`;
  return { url: server.url, requests, close: server.close };
}
