/**
 * One WebSocket session played from the tape (`player.ts` decides which sessions are played): the recorded 101 is
 * answered, what the server sent unprompted goes out on connect, and each client message is answered with the server
 * messages that followed it in the recording, through one queue, at the recorded pace under `--timing`. A miss sends
 * the API's own error event, and under strict the close (1008) saying why. Everything sent and received goes on the
 * replay tape, a message too large to hold twice as it is (`message-body.ts`).
 */
import { WebSocket, type WebSocketServer } from 'ws';
import { scaledDelay } from '../../replay/modes.js';
import type { PlayOutcome, SessionPlay } from '../../replay/session-pool.js';
import { encodeFrameData, frameBytes } from '../../tape/frame.js';
import type { MatchInfo, WsFrame } from '../../tape/schema.js';
import { roundMs } from '../../tape/timing.js';
import type { Decided, Injected } from '../../engine/settle.js';
import { chosenProtocol, upgradeHeaders } from './client-server.js';
import { acceptClient } from './accept-client.js';
import { messageFrame, spillsWhole } from './message-body.js';
import type { SessionPlayerOptions } from './player-options.js';
import { closeWith, sessionTape, type SessionTape } from './session-tape.js';
import type { WsUpgrade } from './types.js';
import type { MissEvent, PlayDecision } from './ws-settle.js';

export type { MissEvent } from './ws-settle.js';

/** Close code of a strict miss: policy violation, with the reason (at most 123 bytes) saying why. */
export const MISS_CLOSE_CODE = 1008;

const sleep = (ms: number): Promise<void> => (ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms)));

/**
 * Play one decided session (`ws-settle.ts`: from the tape, its tee opened, the fault that closes it if a rule picked
 * one); resolves once the client has closed and the session's end is on the tape (or could not be).
 */
export async function playSession(
  up: WsUpgrade,
  session: Decided<PlayDecision>,
  opts: SessionPlayerOptions,
  wss: WebSocketServer,
  register: (stop: () => void) => () => void,
): Promise<void> {
  const elapsed = (): number => roundMs(performance.now() - up.t0);
  const { play, missEvent } = session.decision;
  const recorded = play.source;
  const head = recorded.response?.headers ?? {};
  const protocol = head['sec-websocket-protocol'];
  if (protocol !== undefined) chosenProtocol.set(up.req, protocol);
  upgradeHeaders.set(up.req, head);
  const client = await acceptClient(wss, up);
  if (client === undefined) {
    play.done();
    return;
  }
  const tape = sessionTape(session.tee.begin({ response: { status: 101, headers: head }, timing: { ttfbMs: elapsed(), durationMs: 0 } }));
  const s: Played = {
    up,
    play,
    opts,
    client,
    tape,
    elapsed,
    missEvent,
    faultClose: session.disturb?.close,
    queue: Promise.resolve(),
    out: Promise.resolve(),
    closed: false,
    ending: false,
    served: 0,
    answered: 0,
    firstMiss: undefined,
    decided: Promise.resolve(),
    calls: [],
  };
  if (s.faultClose !== undefined && (s.faultClose.afterMessages ?? 0) === 0) s.queue = s.queue.then(() => closeByFault(s));
  sendAtPace(s, play.opening(), recorded.timing.ttfbMs ?? 0);
  const { code, reason } = await playUntilClosed(s, register);
  await endPlayed(s, code, reason, session.disturb);
}

/** A session being played: what the server's queue, the client's messages and the session's end share. */
interface Played {
  readonly up: WsUpgrade;
  readonly play: SessionPlay;
  readonly opts: SessionPlayerOptions;
  readonly client: WebSocket;
  readonly tape: SessionTape;
  /** The session's clock (ms since the upgrade request arrived). */
  readonly elapsed: () => number;
  readonly missEvent: MissEvent | undefined;
  /** A fault that closes the session after N server messages: the Nth goes out, then the close. */
  readonly faultClose: Injected['close'];
  /**
   * Everything the server says goes out through one queue, in order, each message at its (scaled) recorded gap from
   * the client message it answers.
   */
  queue: Promise<void>;
  /** The last server message (or close) handed to the client: each goes once it is on the tape, after the one before. */
  out: Promise<void>;
  /** The client has closed: nothing more goes out. */
  closed: boolean;
  /** The server's close is on its way (a strict miss, a fault, the recorded close): nothing goes out after it. */
  ending: boolean;
  /** Server messages sent so far (for the fault's count). */
  served: number;
  /** Client messages answered from the recording. */
  answered: number;
  /** Why the first client message that matched nothing did not. */
  firstMiss: string | undefined;
  /** The client messages' outcomes, decided one after the other in the order they came (a call's match may take a while). */
  decided: Promise<void>;
  /** For a session matched one call at a time: how each call was matched, in order (the end line's `notes.calls`). */
  calls: MatchInfo[];
}

/**
 * Answer the client's messages until it closes (tapedeck stopping closes it: 1001, cut after a second); then nothing
 * more goes out, and the recording is released (`SessionPlay.done`).
 */
async function playUntilClosed(s: Played, register: (stop: () => void) => () => void): Promise<{ code: number; reason: Buffer }> {
  s.client.on('message', (data: Buffer, binary: boolean) => fromClient(s, data, binary));
  s.client.on('error', () => undefined);
  const done = new Promise<{ code: number; reason: Buffer }>((resolve) =>
    s.client.once('close', (code: number, reason: Buffer) => resolve({ code, reason })),
  );
  const unregister = register(() => {
    s.client.close(1001, 'tapedeck stopped');
    setTimeout(() => s.client.terminate(), 1000).unref();
  });
  const closed = await done;
  s.closed = true;
  unregister();
  await s.decided;
  s.play.done();
  return closed;
}

/** Put a frame on the replay tape; resolves once it is there, or could not be (replay goes on: the frame is dropped). */
function record(s: Played, frame: WsFrame | Promise<WsFrame>): Promise<void> {
  return s.tape.add(frame).catch(() => undefined);
}

/**
 * Send one server message (or the close), unless the client is gone: on the replay tape first, then to the client,
 * in order (what a client has, the tape has first; the writes of one turn go out together).
 */
function deliver(s: Played, f: WsFrame): void {
  if (s.closed || s.ending || s.client.readyState !== WebSocket.OPEN) return;
  if (f.kind === 'close') {
    s.ending = true;
    const frame: WsFrame = {
      from: 'server',
      offsetMs: s.elapsed(),
      kind: 'close',
      ...(f.code !== undefined ? { code: f.code } : {}),
      ...(f.reason ? { reason: f.reason } : {}),
    };
    toClient(s, frame, () => closeWith(s.client, f.code, f.reason ?? ''));
    return;
  }
  const bytes = frameBytes(f);
  // A large message goes on the replay tape as it is, from the bytes about to be sent (`message-body.ts`).
  const frame = spillsWhole(bytes, s.opts.spill)
    ? messageFrame('server', s.elapsed(), bytes, f.kind === 'binary', s.opts.spill)
    : { ...f, offsetMs: s.elapsed() };
  toClient(s, frame, () => s.client.send(bytes, { binary: f.kind === 'binary' }));
  if (s.faultClose !== undefined && ++s.served === s.faultClose.afterMessages) closeByFault(s);
}

/** `send` runs once `frame` is on the replay tape and everything before it has been handed to the client. */
function toClient(s: Played, frame: WsFrame | Promise<WsFrame>, send: () => void): void {
  const stored = record(s, frame);
  s.out = Promise.all([s.out, stored]).then(() => {
    if (!s.closed && s.client.readyState === WebSocket.OPEN) send();
  });
}

function closeByFault(s: Played): void {
  if (s.faultClose === undefined) return;
  deliver(s, { from: 'server', offsetMs: 0, kind: 'close', code: s.faultClose.code, reason: s.faultClose.reason ?? 'tapedeck fault' });
}

/** Queue recorded server messages, each at its (scaled) gap from `from`, counted from now. */
function sendAtPace(s: Played, frames: readonly WsFrame[], from: number): void {
  const arrived = performance.now();
  s.queue = s.queue.then(async () => {
    for (const f of frames) {
      if (s.opts.timing.mode !== 'instant') await sleep(arrived + scaledDelay(f.offsetMs - from, s.opts.timing) - performance.now());
      deliver(s, f);
    }
  });
}

/** A client message: on the replay tape, then answered from the recording, or as a miss. */
function fromClient(s: Played, data: Buffer, binary: boolean): void {
  const frame: WsFrame = { from: 'client', offsetMs: s.elapsed(), kind: binary ? 'binary' : 'text', data: encodeFrameData(data, binary) };
  void record(s, spillsWhole(data, s.opts.spill) ? messageFrame('client', frame.offsetMs, data, binary, s.opts.spill) : frame);
  s.decided = s.decided
    .then(() => s.play.next(frame))
    .then(
      (outcome) => answer(s, outcome, data, binary),
      (err: unknown) => answer(s, { kind: 'miss', reason: `matching failed: ${(err as Error).message}` }, data, binary),
    );
}

/** A client message's outcome: the recorded server messages that answer it, at their pace, or the miss. */
function answer(s: Played, outcome: PlayOutcome, data: Buffer, binary: boolean): void {
  if (outcome.call !== undefined) s.calls.push(outcome.call);
  if (outcome.kind === 'match') {
    s.answered++;
    sendAtPace(s, outcome.replies, outcome.turn.client.offsetMs);
    return;
  }
  s.firstMiss ??= outcome.reason;
  answerMiss(s, outcome.reason, data, binary);
}

/** A miss: the API's error event (for a JSON message, or the API's own shape), then under strict the close (1008). */
function answerMiss(s: Played, reason: string, data: Buffer, binary: boolean): void {
  const { opts, up } = s;
  const strict = opts.onMiss !== 'lenient';
  const message = `tapedeck: no recording on tape "${opts.tape.name}" matches this message (${reason}; on-miss ${opts.onMiss}${
    opts.onMiss === 'live' ? ': a session cannot go live half-way, so strict' : ''
  })`;
  opts.log.info({ route: up.route.prefix, path: up.path, reason }, 'replay miss in a WebSocket session');
  let json: unknown;
  try {
    json = binary ? undefined : JSON.parse(data.toString('utf8'));
  } catch {
    json = undefined;
  }
  const event = s.missEvent
    ? s.missEvent(message, json)
    : json !== undefined
      ? { type: 'error', error: { type: 'tapedeck_miss', message } }
      : undefined;
  s.queue = s.queue.then(() => {
    if (event !== undefined) deliver(s, { from: 'server', offsetMs: 0, kind: 'text', data: { kind: 'json', json: event } });
    if (strict) deliver(s, { from: 'server', offsetMs: 0, kind: 'close', code: MISS_CLOSE_CODE, reason: closeReason(reason) });
  });
}

/** The client's close and the session's end line: answered from the recording, or the first miss. */
async function endPlayed(s: Played, code: number, reason: Buffer, fault: Injected | undefined): Promise<void> {
  if (code !== 1006)
    void record(s, {
      from: 'client',
      offsetMs: s.elapsed(),
      kind: 'close',
      ...(code === 1005 ? {} : { code }),
      ...(reason.byteLength > 0 ? { reason: reason.toString('utf8') } : {}),
    });
  const match: MatchInfo = {
    kind: s.firstMiss === undefined ? 'exact' : 'miss',
    source: s.play.source.id,
    stage: 'session',
    reason:
      s.firstMiss ??
      (s.calls.length > 0
        ? `${s.answered} response(s) answered from the tape, each matched like an HTTP call`
        : `${s.answered} client message(s) answered from recording #${s.play.source.id}`),
  };
  const notes =
    fault === undefined && s.calls.length === 0
      ? {}
      : { notes: { ...(fault !== undefined ? { fault: fault.rule } : {}), ...(s.calls.length > 0 ? { calls: s.calls } : {}) } };
  await s.tape.end({ durationMs: s.elapsed(), match, ...notes }).catch(() => undefined);
}

/** A close reason fits in 123 bytes. */
function closeReason(reason: string): string {
  let out = `tapedeck replay miss: ${reason}`;
  while (Buffer.byteLength(out) > 123) out = out.slice(0, -4) + '...';
  return out;
}
