/**
 * The upstream side of a relayed session, up to the moment it switches protocols (`relay.ts` does the rest): the
 * connection is opened first so that a refused upgrade (401, 404, 429...) reaches the client as the upstream's own
 * answer, and the messages the server sends before the client is accepted wait, in order and counted against the
 * server->client bound, for the relay to take them.
 */
import { WebSocket } from 'ws';
import { TapedeckError } from '../../errors.js';
import { httpError } from '../../providers/errors.js';
import type { ApiId } from '../../providers/types.js';
import { encodeBody } from '../../tape/body.js';
import type { ExchangeError, HeaderMap } from '../../tape/schema.js';
import type { NewExchange } from '../../tape/stores/tape-writer.js';
import { redactUrlCredentials } from '../../tape/redaction/url-credentials.js';
import { toExchangeError } from '../../upstream/forward.js';
import { headerMapOf } from '../../http/headers.js';
import { answerRaw, refuseRaw } from '../../http/raw-answer.js';
import { MAX_MESSAGE_BYTES } from './client-server.js';
import { createFlow, type Flow } from './flow.js';
import { requestedProtocols, wsUpstreamHeaders } from './session-tape.js';
import type { WsUpgrade } from './types.js';

/** How opening the upstream ended: switched, or the answer it gave instead (or why it could not be reached). */
export type Opened = { ok: true } | { ok: false; error: ExchangeError; status?: number; headers?: HeaderMap; body?: Buffer };

/** A message from the server, taken when it arrived: `sent` is called once it has left tapedeck (`flow.ts`). */
export interface ServerMessage {
  data: Buffer;
  binary: boolean;
  /** Its offset on the session's timeline (ms). */
  at: number;
  sent: () => void;
}

export interface UpstreamDial {
  ws: WebSocket;
  /** Server -> client backpressure, counting from the first message (before the client is accepted too). */
  flow: Flow;
  opened: Promise<Opened>;
  /** The headers of the upstream's 101, once it switched. */
  readonly upgraded: HeaderMap | undefined;
  /** Hands `handler` the server's messages held so far, in order, then each one as it arrives. */
  onMessage(handler: (m: ServerMessage) => void): void;
}

export interface DialOptions {
  url: string;
  /** How long the upstream may take to switch protocols. */
  handshakeMs: number;
  /** The session's clock (ms since the upgrade request arrived). */
  elapsed: () => number;
  /** Told each time the server's messages are paused or resumed. */
  onFlowChange: (paused: boolean, held: number) => void;
}

/** Open the session upstream with the client's headers and subprotocols. */
export function dialUpstream(up: WsUpgrade, opts: DialOptions): UpstreamDial {
  const ws = new WebSocket(opts.url, requestedProtocols(up.headers), {
    headers: wsUpstreamHeaders(up.headers),
    handshakeTimeout: opts.handshakeMs,
    followRedirects: false,
    // The same bound both ways (the `ws` client's default is 100 MiB).
    maxPayload: MAX_MESSAGE_BYTES,
  });
  // Each direction holds a bounded amount: past it, the side that sends is paused until the other side takes more.
  const flow = createFlow(ws, { onChange: opts.onFlowChange });
  // Messages from the server before the client is accepted wait here, in order.
  const early: ServerMessage[] = [];
  let handler = (m: ServerMessage): void => void early.push(m);
  ws.on('message', (data: Buffer, binary: boolean) => handler({ data, binary, at: opts.elapsed(), sent: flow.take(data.byteLength) }));
  let upgraded: HeaderMap | undefined;
  ws.on('upgrade', (res) => (upgraded = headerMapOf(res.headers)));
  const opened = upstreamOpened(ws);
  return {
    ws,
    flow,
    opened,
    get upgraded() {
      return upgraded;
    },
    onMessage(next) {
      handler = next;
      for (const m of early.splice(0)) next(m);
    },
  };
}

/** Resolves once the upstream switched protocols, answered without switching, or could not be reached. Never rejects. */
async function upstreamOpened(ws: WebSocket): Promise<Opened> {
  const opened = await new Promise<Opened>((resolve) => {
    ws.once('open', () => resolve({ ok: true }));
    ws.once('unexpected-response', (_req, res) => {
      // The upstream answered without switching (401, 404, 429...): that answer is the exchange, passed on as it is.
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => undefined);
      res.on('end', () =>
        resolve({
          ok: false,
          error: {
            code: 'NOT_UPGRADED',
            message: `the upstream answered ${res.statusCode ?? 0} instead of switching protocols`,
            phase: 'response',
          },
          status: res.statusCode ?? 502,
          headers: headerMapOf(res.headers),
          body: Buffer.concat(chunks),
        }),
      );
    });
    ws.once('error', (err) => resolve({ ok: false, error: toExchangeError(err, 'connect') }));
  });
  ws.on('error', () => undefined);
  return opened;
}

/**
 * The answer to the client of an upgrade the upstream did not switch: its own answer as it is, or (when it could not
 * be reached) tapedeck's error in the API's shape, naming the upstream without credentials. `response` is the answer
 * for the tape; `send` answers the client (once it is on the tape).
 */
export function refusedAnswer(
  up: WsUpgrade,
  opened: Extract<Opened, { ok: false }>,
  api: ApiId | undefined,
): { response: NonNullable<NewExchange['response']>; send: () => void } {
  if (opened.status !== undefined) {
    const status = opened.status;
    const headers = opened.headers ?? {};
    const body = opened.body ?? Buffer.alloc(0);
    return {
      response: { status, headers, body: encodeBody(body, headers['content-type']) },
      send: () => answerRaw(up.socket, status, headers, body),
    };
  }
  const err = new TapedeckError(
    'UPSTREAM_ERROR',
    `tapedeck could not open the WebSocket to ${redactUrlCredentials(up.route.upstream)}: ${opened.error.message}`,
    {
      details: { code: opened.error.code },
      headers: { 'x-tapedeck-error': opened.error.code },
    },
  );
  const answer = httpError(err, api);
  return {
    response: { status: answer.status, headers: answer.headers, body: { kind: 'json', json: answer.body } },
    send: () => refuseRaw(up.socket, answer),
  };
}
