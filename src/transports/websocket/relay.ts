/**
 * A live WebSocket session through tapedeck: the upstream is connected first (so a refused upgrade reaches the client
 * as the upstream's own answer), then the client's handshake is completed with the subprotocol the upstream chose,
 * and every message is relayed and put on the tape in the order tapedeck saw it. A message from the server is on
 * the tape before the client gets it (in order, the writes of one event-loop turn grouped): a recorder killed at any
 * point leaves every message the client had received on the tape. Record mode relays every session; replay relays
 * the ones that go live (`--on-miss live`, modified replay), with the match and overrides noted.
 */
import { WebSocket, type WebSocketServer } from 'ws';
import { TapedeckError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { detectLlmApi } from '../../providers/detect.js';
import { httpError } from '../../providers/errors.js';
import { encodeBody } from '../../tape/body.js';
import { upstreamUrl } from '../../tape/routes.js';
import type { ExchangeError, HeaderMap, MatchInfo, WsFrame } from '../../tape/schema.js';
import { round } from '../../tape/sse.js';
import type { NewExchange, TapeWriter } from '../../tape/stores/tape-writer.js';
import { toExchangeError } from '../../upstream/forward.js';
import { headerMapOf } from '../../http/headers.js';
import { chosenProtocol, MAX_MESSAGE_BYTES, upgradeHeaders } from './client-server.js';
import { createFlow, type Flow } from './flow.js';
import { messageFrame, spillsWhole } from './message-body.js';
import type { BodySpill } from '../../http/body-spill.js';
import { answerRaw, refuseRaw } from '../../http/raw-answer.js';
import { sessionTape, wsTapeHeaders, wsUpstreamHeaders, requestedProtocols, closeWith } from './session-tape.js';
import type { WsUpgrade } from './types.js';
import { wsCall } from './ws-call.js';
import { exchangeRecord } from '../../engine/record.js';
import { redactUrlCredentials } from '../../tape/redaction/url-credentials.js';

export interface RelayOptions {
  writer: TapeWriter;
  /** Accepts the client's side of the session (`createClientServer`). */
  wss: WebSocketServer;
  log: Logger;
  /** How long the upstream may take to switch protocols. */
  handshakeMs: number;
  /** Once the tape cannot be written: `refuse` closes the session (1011), `serve` relays it unrecorded. */
  onTapeFailure: 'refuse' | 'serve';
  /** On a replay tape: how this session was answered, and notes (overrides applied). */
  match?: MatchInfo;
  notes?: Record<string, unknown>;
  /** Notes known only at the end (the overrides a rewrite applied), added by the end line. */
  endNotes?: () => Record<string, unknown> | undefined;
  /** Modified replay: the query sent upstream, and each client message as sent upstream (JSON in, JSON out). */
  rewrite?: { query?: (q: [string, string][]) => [string, string][]; clientJson?: (json: unknown) => unknown };
  /** Where messages above its limit go as they are (the tape's store): held once, not encoded (`message-body.ts`). */
  spill?: BodySpill;
  /** Registers a way to stop the session (tapedeck stopping); returns the unregister function. */
  register: (stop: () => void) => () => void;
}

/** Relay one session; resolves once it has ended and its end is on the tape (or could not be). Never rejects. */
export async function relaySession(up: WsUpgrade, opts: RelayOptions): Promise<void> {
  const elapsed = (): number => round(performance.now() - up.t0);
  const query = opts.rewrite?.query ? opts.rewrite.query(up.query) : up.query;
  const rawQuery = opts.rewrite?.query ? undefined : up.rawQuery;
  const url = upstreamUrl(up.route, up.path, query, rawQuery).replace(/^http/i, 'ws');
  const call = wsCall(up, query);
  const extras = { match: opts.match, notes: opts.notes };
  const api = detectLlmApi(up.route.prefix, up.path, 'GET', up.route.upstream);

  const cannot = opts.writer.failure;
  if (cannot !== undefined && opts.onTapeFailure === 'refuse') {
    refuseRaw(up.socket, httpError(cannot, api));
    return;
  }

  const upstream = new WebSocket(url, requestedProtocols(up.headers), {
    headers: wsUpstreamHeaders(up.headers),
    handshakeTimeout: opts.handshakeMs,
    followRedirects: false,
    // The same bound both ways (the `ws` client's default is 100 MiB).
    maxPayload: MAX_MESSAGE_BYTES,
  });
  // Each direction holds a bounded amount: past it, the side that sends is paused until the other side takes more.
  const flowLog =
    (direction: string) =>
    (paused: boolean, held: number): void =>
      opts.log.debug(
        { route: up.route.prefix, path: up.path, direction, held },
        `WebSocket backpressure: ${paused ? 'paused' : 'resumed'}`,
      );
  const toClientFlow = createFlow(upstream, { onChange: flowLog('server->client') });
  // Messages from the server before the client is accepted wait here, in order.
  const early: { data: Buffer; binary: boolean; at: number; sent: () => void }[] = [];
  let onServer = (data: Buffer, binary: boolean): void =>
    void early.push({ data, binary, at: elapsed(), sent: toClientFlow.take(data.byteLength) });
  upstream.on('message', (data: Buffer, binary: boolean) => onServer(data, binary));
  let upgraded: HeaderMap | undefined;
  upstream.on('upgrade', (res) => (upgraded = headerMapOf(res.headers)));

  const opened = await new Promise<{ ok: true } | { ok: false; error: ExchangeError; status?: number; headers?: HeaderMap; body?: Buffer }>(
    (resolve) => {
      upstream.once('open', () => resolve({ ok: true }));
      upstream.once('unexpected-response', (_req, res) => {
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
      upstream.once('error', (err) => resolve({ ok: false, error: toExchangeError(err, 'connect') }));
    },
  );
  upstream.on('error', () => undefined);

  if (!opened.ok) {
    const ttfbMs = elapsed();
    let response: NewExchange['response'];
    if (opened.status !== undefined) {
      const headers = opened.headers ?? {};
      const body = opened.body ?? Buffer.alloc(0);
      answerRaw(up.socket, opened.status, headers, body);
      response = { status: opened.status, headers, body: encodeBody(body, headers['content-type']) };
    } else {
      const err = new TapedeckError(
        'UPSTREAM_ERROR',
        `tapedeck could not open the WebSocket to ${redactUrlCredentials(up.route.upstream)}: ${opened.error.message}`,
        {
          details: { code: opened.error.code },
          headers: { 'x-tapedeck-error': opened.error.code },
        },
      );
      const answer = httpError(err, api);
      refuseRaw(up.socket, answer);
      response = { status: answer.status, headers: answer.headers, body: { kind: 'json', json: answer.body } };
    }
    await opts.writer
      .append(exchangeRecord(call, { response, error: opened.error, timing: { ttfbMs, durationMs: elapsed() } }, extras))
      .catch((err: unknown) => opts.log.error({ err: (err as Error).message }, 'could not write a refused WebSocket upgrade'));
    return;
  }

  const ttfbMs = elapsed();
  const protocol = upstream.protocol;
  if (protocol !== '') chosenProtocol.set(up.req, protocol);
  upgradeHeaders.set(up.req, upgraded ?? {});
  const tape = sessionTape(
    opts.writer,
    exchangeRecord(call, { response: { status: 101, headers: wsTapeHeaders(upgraded ?? {}) }, timing: { ttfbMs, durationMs: 0 } }, extras),
  );
  const client = await new Promise<WebSocket | undefined>((resolve) => {
    if (up.socket.destroyed) return resolve(undefined);
    up.socket.once('close', () => resolve(undefined));
    opts.wss.handleUpgrade(up.req, up.socket, up.head, (ws) => resolve(ws));
  });
  if (client === undefined) {
    toClientFlow.end();
    upstream.terminate();
    await tape.end({
      durationMs: elapsed(),
      error: { code: 'CLIENT_CLOSED', message: 'the client went away during the handshake', phase: 'connect' },
    });
    return;
  }

  let failed: TapedeckError | undefined;
  const tapeFailed = (err: unknown): void => {
    if (failed !== undefined) return;
    failed = err instanceof TapedeckError ? err : new TapedeckError('TAPE_WRITE_FAILED', (err as Error).message, { cause: err });
    if (opts.onTapeFailure === 'refuse') {
      opts.log.error({ err: failed.message }, 'the tape cannot be written: closing the WebSocket session');
      client.close(1011, 'tapedeck cannot write the tape');
      upstream.close(1011, 'tapedeck cannot write the tape');
    }
  };
  const record = (frame: WsFrame | Promise<WsFrame>): Promise<void> => tape.add(frame).catch(tapeFailed);
  const frameOf = (from: WsFrame['from'], offsetMs: number, data: Buffer, binary: boolean): WsFrame | Promise<WsFrame> =>
    messageFrame(from, offsetMs, data, binary, opts.spill);

  // Server -> client: on the tape first, then sent, in arrival order.
  const toClient: { send: () => void; ready: boolean }[] = [];
  const pump = (): void => {
    while (toClient.length > 0 && (toClient[0] as { ready: boolean }).ready) (toClient.shift() as { send: () => void }).send();
  };
  const queue = (frame: WsFrame | Promise<WsFrame>, send: () => void): void => {
    const entry = { send, ready: false };
    toClient.push(entry);
    void record(frame).then(() => {
      entry.ready = true;
      pump();
    });
  };
  // A message has left once handed to the client's socket (or dropped): `ws` calls back when it is written out.
  const toClientSend = (data: Buffer, binary: boolean, sent: () => void): void => {
    if (client.readyState === WebSocket.OPEN && (failed === undefined || opts.onTapeFailure === 'serve'))
      client.send(data, { binary }, () => sent());
    else sent();
  };
  onServer = (data, binary) => {
    const sent = toClientFlow.take(data.byteLength);
    queue(frameOf('server', elapsed(), data, binary), () => toClientSend(data, binary, sent));
  };
  for (const m of early.splice(0)) {
    queue(frameOf('server', m.at, m.data, m.binary), () => toClientSend(m.data, m.binary, m.sent));
  }
  const toUpstreamFlow: Flow = createFlow(client, { onChange: flowLog('client->server') });

  client.on('message', (data: Buffer, binary: boolean) => {
    let out = data;
    const rewrite = opts.rewrite?.clientJson;
    // Modified replay rewrites the configuring messages (JSON); a message too large to hold twice is not one.
    if (rewrite !== undefined && !binary && !spillsWhole(data, opts.spill)) {
      try {
        out = Buffer.from(JSON.stringify(rewrite(JSON.parse(data.toString('utf8')) as unknown)));
      } catch {
        out = data;
      }
    }
    // Held until it is on the tape and handed to the upstream's socket.
    const sent = toUpstreamFlow.take(data.byteLength);
    let parts = 2;
    const part = (): void => {
      if (--parts === 0) sent();
    };
    void record(frameOf('client', elapsed(), out, binary)).then(part);
    if (upstream.readyState === WebSocket.OPEN) upstream.send(out, { binary }, part);
    else part();
  });
  client.on('error', () => undefined);

  let error: ExchangeError | undefined;
  // Sides closed so far: a session one side has closed is ending, not cut, when tapedeck stops.
  let closes = 0;
  const done = new Promise<void>((resolve) => {
    const closed = (): void => {
      if (++closes === 2) resolve();
    };
    client.once('close', (code: number, reason: Buffer) => {
      // Nothing more goes to the client: the upstream is read again (its close must be), and not paused again.
      toClientFlow.end();
      if (code === 1006) error ??= { code: 'CLIENT_RESET', message: 'the client connection ended without a close', phase: 'stream' };
      else void record({ from: 'client', offsetMs: elapsed(), kind: 'close', ...closeFields(code, reason) });
      closeWith(upstream, code, reason);
      closed();
    });
    upstream.once('close', (code: number, reason: Buffer) => {
      toUpstreamFlow.end();
      if (code === 1006) error ??= { code: 'UPSTREAM_RESET', message: 'the upstream connection ended without a close', phase: 'stream' };
      // After the messages before it: the client is closed once they are sent.
      const frame: WsFrame = { from: 'server', offsetMs: elapsed(), kind: 'close', ...closeFields(code, reason) };
      const after = (): void => closeWith(client, code, reason);
      if (code === 1006) {
        toClient.push({ send: after, ready: true });
        pump();
      } else queue(frame, after);
      closed();
    });
  });
  const unregister = opts.register(() => {
    if (closes === 0) error ??= { code: 'SHUTDOWN', message: 'tapedeck stopped during the session', phase: 'stream' };
    // Both closes must be read.
    toClientFlow.end();
    toUpstreamFlow.end();
    client.close(1001, 'tapedeck stopped');
    upstream.close(1001, 'tapedeck stopped');
    // A peer that does not answer the close within a second is cut.
    setTimeout(() => {
      client.terminate();
      upstream.terminate();
    }, 1000).unref();
  });
  await done;
  unregister();
  const notes = opts.endNotes?.();
  await tape.end({ durationMs: elapsed(), ...(error ? { error } : {}), ...(notes ? { notes } : {}) }).catch((err: unknown) => {
    if (failed === undefined) opts.log.error({ err: (err as Error).message }, 'could not write the end of a WebSocket session');
  });
}

function closeFields(code: number, reason: Buffer): Pick<WsFrame, 'code' | 'reason'> {
  return { ...(code === 1005 ? {} : { code }), ...(reason.byteLength > 0 ? { reason: reason.toString('utf8') } : {}) };
}
