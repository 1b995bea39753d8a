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
import { upstreamUrl } from '../../tape/routes.js';
import type { ExchangeError, WsFrame } from '../../tape/schema.js';
import { roundMs } from '../../tape/timing.js';
import type { Decided, Injected, SettleContext } from '../../engine/settle.js';
import type { TapeFailurePolicy } from '../../engine/tape-failure.js';
import { chosenProtocol, upgradeHeaders } from './client-server.js';
import { createFlow, type Flow } from './flow.js';
import { messageFrame, spillsWhole } from './message-body.js';
import type { BodySpill } from '../../http/body-spill.js';
import { refuseRaw } from '../../http/raw-answer.js';
import { sessionTape, wsTapeHeaders, closeWith, type SessionTape } from './session-tape.js';
import type { WsUpgrade } from './types.js';
import { acceptClient } from './accept-client.js';
import { refusedAnswer, dialUpstream, type ServerMessage, type UpstreamDial } from './relay-upstream.js';
import type { LiveDecision } from './ws-settle.js';

export interface RelayOptions {
  /** The tape the session goes on (whether it has failed) and what a failed tape does: `refuse` closes the session (1011), `serve` relays it unrecorded. */
  settle: SettleContext;
  /** Accepts the client's side of the session (`createClientServer`). */
  wss: WebSocketServer;
  log: Logger;
  /** How long the upstream may take to switch protocols. */
  handshakeMs: number;
  /** Where messages above its limit go as they are (the tape's store): held once, not encoded (`message-body.ts`). */
  spill?: BodySpill;
  /** Registers a way to stop the session (tapedeck stopping); returns the unregister function. */
  register: (stop: () => void) => () => void;
}

/**
 * Relay one decided session (`ws-settle.ts`: live, its tee opened, the fault that closes it if a rule picked one);
 * resolves once it has ended and its end is on the tape (or could not be). Never rejects.
 */
export async function relaySession(up: WsUpgrade, session: Decided<LiveDecision>, opts: RelayOptions): Promise<void> {
  const elapsed = (): number => roundMs(performance.now() - up.t0);
  const { decision: live, tee } = session;
  const url = upstreamUrl(up.route, up.path, live.query, live.rawQuery).replace(/^http/i, 'ws');
  const api = detectLlmApi(up.route.prefix, up.path, 'GET', up.route.upstream);
  const policy = opts.settle.onTapeFailure ?? 'refuse';

  const cannot = opts.settle.log.writer.failure;
  if (cannot !== undefined && policy === 'refuse') {
    refuseRaw(up.socket, httpError(cannot, api));
    return;
  }

  const onFlowChange = flowLog(up, opts.log, 'server->client');
  const dial = dialUpstream(up, { url, handshakeMs: opts.handshakeMs, elapsed, onFlowChange });
  const opened = await dial.opened;
  if (!opened.ok) {
    // The upstream's own answer (or tapedeck's error) reaches the client once it is on the tape.
    const ttfbMs = elapsed();
    const refused = refusedAnswer(up, opened, api);
    await tee.finish(
      { response: refused.response, error: opened.error, timing: { ttfbMs, durationMs: elapsed() } },
      { end: refused.send, cut: () => up.socket.destroy() },
    );
    return;
  }

  const ttfbMs = elapsed();
  const protocol = dial.ws.protocol;
  if (protocol !== '') chosenProtocol.set(up.req, protocol);
  const upgraded = dial.upgraded ?? {};
  upgradeHeaders.set(up.req, upgraded);
  const tape = sessionTape(tee.begin({ response: { status: 101, headers: wsTapeHeaders(upgraded) }, timing: { ttfbMs, durationMs: 0 } }));
  const client = await acceptClient(opts.wss, up);
  if (client === undefined) {
    dial.flow.end();
    dial.ws.terminate();
    await tape.end({
      durationMs: elapsed(),
      error: { code: 'CLIENT_CLOSED', message: 'the client went away during the handshake', phase: 'connect' },
    });
    return;
  }
  const relay: Relay = {
    opts,
    live,
    policy,
    elapsed,
    client,
    upstream: dial.ws,
    tape,
    toClientFlow: dial.flow,
    toUpstreamFlow: createFlow(client, { onChange: flowLog(up, opts.log, 'client->server') }),
    toClient: [],
    failed: undefined,
    error: undefined,
    closes: 0,
    stoppedOpen: false,
    faultClose: session.disturb?.close,
    served: 0,
    faultClosed: false,
  };
  await relayUntilClosed(relay, dial);
  await endRelay(relay);
}

/** Each direction holds a bounded amount (`flow.ts`): its pauses and resumes, as debug lines. */
function flowLog(up: WsUpgrade, log: Logger, direction: string): (paused: boolean, held: number) => void {
  return (paused, held) =>
    log.debug({ route: up.route.prefix, path: up.path, direction, held }, `WebSocket backpressure: ${paused ? 'paused' : 'resumed'}`);
}

/** A server message waiting its turn to the client: `ready` once it is on the tape (or could not be). */
interface Outgoing {
  send: () => void;
  ready: boolean;
}

/** A relayed session once both sides are open: what its two directions, its closes and its end share. */
interface Relay {
  readonly opts: RelayOptions;
  readonly live: LiveDecision;
  readonly policy: TapeFailurePolicy;
  /** The session's clock (ms since the upgrade request arrived). */
  readonly elapsed: () => number;
  readonly client: WebSocket;
  readonly upstream: WebSocket;
  readonly tape: SessionTape;
  /** Backpressure on the upstream's messages (paused while too much waits for the client), and on the client's. */
  readonly toClientFlow: Flow;
  readonly toUpstreamFlow: Flow;
  /** Server -> client: on the tape first, then sent, in arrival order. */
  readonly toClient: Outgoing[];
  /** Set once the tape cannot be written. */
  failed: TapedeckError | undefined;
  /** What went wrong with the session, if anything (the first thing found). */
  error: ExchangeError | undefined;
  /** Sides closed so far: a session one side has closed is ending, not cut, when tapedeck stops. */
  closes: number;
  /** Tapedeck stopped while neither side had closed. */
  stoppedOpen: boolean;
  /** A fault that closes the session after N server messages: the Nth goes to the client, then the rule's close. */
  readonly faultClose: Injected['close'];
  /** Server messages relayed to the client so far (for the fault's count). */
  served: number;
  /** The fault's close is on its way: the server's later messages are neither relayed nor recorded. */
  faultClosed: boolean;
}

/** Relay messages both ways until both sides have closed (or tapedeck stopped the session). */
async function relayUntilClosed(r: Relay, dial: UpstreamDial): Promise<void> {
  if (r.faultClose !== undefined && (r.faultClose.afterMessages ?? 0) === 0) closeByFault(r);
  dial.onMessage((m) => fromServer(r, m));
  r.client.on('message', (data: Buffer, binary: boolean) => fromClient(r, data, binary));
  r.client.on('error', () => undefined);
  const done = bothClosed(r);
  const unregister = r.opts.register(() => stopRelay(r));
  await done;
  unregister();
}

/** The session's end line: how long it lasted, what went wrong, the notes known only now. */
async function endRelay(r: Relay): Promise<void> {
  const notes = r.live.endNotes?.();
  await r.tape
    .end({ durationMs: r.elapsed(), ...(r.error ? { error: r.error } : {}), ...(notes ? { notes } : {}) })
    .catch((err: unknown) => {
      if (r.failed === undefined) r.opts.log.error({ err: (err as Error).message }, 'could not write the end of a WebSocket session');
    });
}

/** The tape cannot be written: noted once; under `refuse` both sides are closed (1011). */
function tapeFailed(r: Relay, err: unknown): void {
  if (r.failed !== undefined) return;
  r.failed = err instanceof TapedeckError ? err : new TapedeckError('TAPE_WRITE_FAILED', (err as Error).message, { cause: err });
  if (r.policy === 'refuse') {
    r.opts.log.error({ err: r.failed.message }, 'the tape cannot be written: closing the WebSocket session');
    r.client.close(1011, 'tapedeck cannot write the tape');
    r.upstream.close(1011, 'tapedeck cannot write the tape');
  }
}

/** Put a frame on the tape; resolves once it is there or could not be (never rejects). */
function record(r: Relay, frame: WsFrame | Promise<WsFrame>): Promise<void> {
  return r.tape.add(frame).catch((err: unknown) => tapeFailed(r, err));
}

function frameOf(r: Relay, from: WsFrame['from'], offsetMs: number, data: Buffer, binary: boolean): WsFrame | Promise<WsFrame> {
  return messageFrame(from, offsetMs, data, binary, r.opts.spill);
}

/** Send what is ready to the client, in order, up to the first message not yet on the tape. */
function pump(r: Relay): void {
  while (r.toClient.length > 0 && (r.toClient[0] as Outgoing).ready) (r.toClient.shift() as Outgoing).send();
}

/** `send` runs once `frame` is on the tape and every server message before it has been sent. */
function queueToClient(r: Relay, frame: WsFrame | Promise<WsFrame>, send: () => void): void {
  const entry: Outgoing = { send, ready: false };
  r.toClient.push(entry);
  void record(r, frame).then(() => {
    entry.ready = true;
    pump(r);
  });
}

/** A message has left once handed to the client's socket (or dropped): `ws` calls back when it is written out. */
function sendToClient(r: Relay, data: Buffer, binary: boolean, sent: () => void): void {
  if (r.client.readyState === WebSocket.OPEN && (r.failed === undefined || r.policy === 'serve'))
    r.client.send(data, { binary }, () => sent());
  else sent();
}

/** Server -> client: on the tape first, then sent, in arrival order. */
function fromServer(r: Relay, m: ServerMessage): void {
  // A fault rule closed the client's side: what the server says after is neither relayed nor on the tape.
  if (r.faultClosed) return m.sent();
  queueToClient(r, frameOf(r, 'server', m.at, m.data, m.binary), () => sendToClient(r, m.data, m.binary, m.sent));
  if (r.faultClose !== undefined && ++r.served === r.faultClose.afterMessages) closeByFault(r);
}

/** The fault's close, as the server's: on the tape, then to the client, after the messages before it. */
function closeByFault(r: Relay): void {
  const close = r.faultClose;
  if (close === undefined || r.faultClosed) return;
  r.faultClosed = true;
  const reason = close.reason ?? 'tapedeck fault';
  queueToClient(r, { from: 'server', offsetMs: r.elapsed(), kind: 'close', code: close.code, reason }, () =>
    closeWith(r.client, close.code, reason),
  );
}

/** Client -> server: held until it is on the tape and handed to the upstream's socket. */
function fromClient(r: Relay, data: Buffer, binary: boolean): void {
  const out = rewritten(r, data, binary);
  const sent = r.toUpstreamFlow.take(data.byteLength);
  let parts = 2;
  const part = (): void => {
    if (--parts === 0) sent();
  };
  void record(r, frameOf(r, 'client', r.elapsed(), out, binary)).then(part);
  if (r.upstream.readyState === WebSocket.OPEN) r.upstream.send(out, { binary }, part);
  else part();
}

/** Modified replay rewrites the configuring messages (JSON); a message too large to hold twice is not one. */
function rewritten(r: Relay, data: Buffer, binary: boolean): Buffer {
  const rewrite = r.live.clientJson;
  if (rewrite === undefined || binary || spillsWhole(data, r.opts.spill)) return data;
  try {
    return Buffer.from(JSON.stringify(rewrite(JSON.parse(data.toString('utf8')) as unknown)));
  } catch {
    return data;
  }
}

/** Resolves once both sides have closed, each close passed on to the other side. */
function bothClosed(r: Relay): Promise<void> {
  return new Promise<void>((resolve) => {
    const closed = (): void => {
      if (++r.closes === 2) resolve();
    };
    r.client.once('close', (code: number, reason: Buffer) => {
      clientClosed(r, code, reason);
      closed();
    });
    r.upstream.once('close', (code: number, reason: Buffer) => {
      upstreamClosed(r, code, reason);
      closed();
    });
  });
}

function clientClosed(r: Relay, code: number, reason: Buffer): void {
  // Nothing more goes to the client: the upstream is read again (its close must be), and not paused again.
  r.toClientFlow.end();
  // The client's answer to tapedeck's own close (1001), or none: the stop cut the session.
  if (r.stoppedOpen && (code === 1001 || code === 1005 || code === 1006))
    r.error ??= { code: 'SHUTDOWN', message: 'tapedeck stopped during the session', phase: 'stream' };
  if (code === 1006) r.error ??= { code: 'CLIENT_RESET', message: 'the client connection ended without a close', phase: 'stream' };
  else void record(r, { from: 'client', offsetMs: r.elapsed(), kind: 'close', ...closeFields(code, reason) });
  closeWith(r.upstream, code, reason);
}

function upstreamClosed(r: Relay, code: number, reason: Buffer): void {
  r.toUpstreamFlow.end();
  // The client was closed by a fault rule: the upstream's close answers the one passed on from the client.
  if (r.faultClosed) return;
  if (code === 1006) r.error ??= { code: 'UPSTREAM_RESET', message: 'the upstream connection ended without a close', phase: 'stream' };
  // After the messages before it: the client is closed once they are sent.
  const frame: WsFrame = { from: 'server', offsetMs: r.elapsed(), kind: 'close', ...closeFields(code, reason) };
  const after = (): void => closeWith(r.client, code, reason);
  if (code === 1006) {
    r.toClient.push({ send: after, ready: true });
    pump(r);
  } else queueToClient(r, frame, after);
}

/** Tapedeck is stopping: both sides are asked to close (1001, going away). */
function stopRelay(r: Relay): void {
  // Neither side had closed: the session is cut by the stop, unless the client's own close was already on its way
  // (an agent that closes and exits at once: its close is read after the stop; `clientClosed` tells them apart).
  if (r.closes === 0) r.stoppedOpen = true;
  // Both closes must be read.
  r.toClientFlow.end();
  r.toUpstreamFlow.end();
  r.client.close(1001, 'tapedeck stopped');
  r.upstream.close(1001, 'tapedeck stopped');
  // A peer that does not answer the close within a second is cut.
  setTimeout(() => {
    r.client.terminate();
    r.upstream.terminate();
  }, 1000).unref();
}

function closeFields(code: number, reason: Buffer): Pick<WsFrame, 'code' | 'reason'> {
  return { ...(code === 1005 ? {} : { code }), ...(reason.byteLength > 0 ? { reason: reason.toString('utf8') } : {}) };
}
