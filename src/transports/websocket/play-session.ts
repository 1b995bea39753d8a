/**
 * One WebSocket session played from the tape (`player.ts` decides which sessions are played): the recorded 101 is
 * answered, what the server sent unprompted goes out on connect, and each client message is answered with the server
 * messages that followed it in the recording, through one queue, at the recorded pace under `--timing`. A miss sends
 * the API's own error event, and under strict the close (1008) saying why. Everything sent and received goes on the
 * replay tape, a message too large to hold twice as it is (`message-body.ts`).
 */
import { WebSocket, type WebSocketServer } from 'ws';
import { scaledDelay } from '../../replay/modes.js';
import type { SessionPlay } from '../../replay/session-pool.js';
import { encodeFrameData, frameBytes } from '../../tape/frame.js';
import type { MatchInfo, WsFrame } from '../../tape/schema.js';
import { roundMs } from '../../tape/timing.js';
import type { PickedFault } from '../../engine/faults/fault-plan.js';
import { exchangeRecord } from '../../engine/record.js';
import { chosenProtocol, upgradeHeaders } from './client-server.js';
import { acceptClient } from './accept-client.js';
import { messageFrame, spillsWhole } from './message-body.js';
import type { SessionPlayerOptions } from './player-options.js';
import { closeWith, sessionTape, type SessionTape } from './session-tape.js';
import type { WsUpgrade } from './types.js';
import { wsCall } from './ws-call.js';

/** Close code of a strict miss: policy violation, with the reason (at most 123 bytes) saying why. */
export const MISS_CLOSE_CODE = 1008;

/** The API's own error event for a miss, given the client message it answers (`SessionReader.missEvent`). */
export type MissEvent = (message: string, client: unknown) => unknown;

const sleep = (ms: number): Promise<void> => (ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms)));

/** Play one session; resolves once the client has closed and the session's end is on the tape (or could not be). */
export async function playSession(
  up: WsUpgrade,
  play: SessionPlay,
  opts: SessionPlayerOptions,
  wss: WebSocketServer,
  register: (stop: () => void) => () => void,
  missEvent: MissEvent | undefined,
  fault?: PickedFault,
): Promise<void> {
  const elapsed = (): number => roundMs(performance.now() - up.t0);
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
  const tape = sessionTape(
    opts.out.writer,
    exchangeRecord(
      wsCall(up),
      { response: { status: 101, headers: head }, timing: { ttfbMs: elapsed(), durationMs: 0 } },
      { match: { kind: 'exact', source: recorded.id, stage: 'session', reason: 'session replayed message by message' } },
    ),
  );
  const s: Played = {
    up,
    play,
    opts,
    client,
    tape,
    elapsed,
    missEvent,
    faultClose: fault?.then.close,
    queue: Promise.resolve(),
    closed: false,
    served: 0,
    answered: 0,
    firstMiss: undefined,
  };
  if (s.faultClose !== undefined && (s.faultClose.afterMessages ?? 0) === 0) s.queue = s.queue.then(() => closeByFault(s));
  sendAtPace(s, play.opening(), recorded.timing.ttfbMs ?? 0);
  const { code, reason } = await playUntilClosed(s, register);
  await endPlayed(s, code, reason, fault);
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
  readonly faultClose: PickedFault['then']['close'];
  /**
   * Everything the server says goes out through one queue, in order, each message at its (scaled) recorded gap from
   * the client message it answers.
   */
  queue: Promise<void>;
  /** The client has closed: nothing more goes out. */
  closed: boolean;
  /** Server messages sent so far (for the fault's count). */
  served: number;
  /** Client messages answered from the recording. */
  answered: number;
  /** Why the first client message that matched nothing did not. */
  firstMiss: string | undefined;
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
  s.play.done();
  return closed;
}

/** Put a frame on the replay tape; a frame that cannot be written is dropped (replay goes on). */
function record(s: Played, frame: WsFrame | Promise<WsFrame>): void {
  void s.tape.add(frame).catch(() => undefined);
}

/** Send one server message (or the close) now, unless the client is gone, and put it on the replay tape. */
function deliver(s: Played, f: WsFrame): void {
  if (s.closed || s.client.readyState !== WebSocket.OPEN) return;
  if (f.kind === 'close') {
    record(s, {
      from: 'server',
      offsetMs: s.elapsed(),
      kind: 'close',
      ...(f.code !== undefined ? { code: f.code } : {}),
      ...(f.reason ? { reason: f.reason } : {}),
    });
    closeWith(s.client, f.code, f.reason ?? '');
    return;
  }
  const bytes = frameBytes(f);
  s.client.send(bytes, { binary: f.kind === 'binary' });
  // A large message goes on the replay tape as it is, from the bytes just sent (`message-body.ts`).
  record(
    s,
    spillsWhole(bytes, s.opts.spill)
      ? messageFrame('server', s.elapsed(), bytes, f.kind === 'binary', s.opts.spill)
      : { ...f, offsetMs: s.elapsed() },
  );
  if (s.faultClose !== undefined && ++s.served === s.faultClose.afterMessages) closeByFault(s);
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
  record(s, spillsWhole(data, s.opts.spill) ? messageFrame('client', frame.offsetMs, data, binary, s.opts.spill) : frame);
  const outcome = s.play.next(frame);
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
async function endPlayed(s: Played, code: number, reason: Buffer, fault: PickedFault | undefined): Promise<void> {
  if (code !== 1006)
    record(s, {
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
    reason: s.firstMiss ?? `${s.answered} client message(s) answered from recording #${s.play.source.id}`,
  };
  const notes = fault === undefined ? {} : { notes: { fault: fault.description } };
  await s.tape.end({ durationMs: s.elapsed(), match, ...notes }).catch(() => undefined);
}

/** A close reason fits in 123 bytes. */
function closeReason(reason: string): string {
  let out = `tapedeck replay miss: ${reason}`;
  while (Buffer.byteLength(out) > 123) out = out.slice(0, -4) + '...';
  return out;
}
