/**
 * Replay mode for WebSocket sessions: tapedeck plays the server. What the server sent unprompted goes out on
 * connect; each client message is matched against the recorded client messages in order (`replay/session-pool.ts`)
 * and answered with the server messages that followed it, at the recorded pace under `--timing`. A miss sends the
 * API's own error event; strict then closes the session (1008, the reason saying why), lenient goes on. A session the
 * tape has nothing for is refused like an HTTP miss (404 in the API's shape), or goes live under `--on-miss live`;
 * sessions whose LLM calls go live (modified replay) are relayed with the overrides applied. Every session, played
 * or live, is written to the replay tape.
 */
import { WebSocket } from 'ws';
import type { Logger } from '../../log.js';
import { detectSession, sessionIdKeys } from '../../providers/sessions/detect.js';
import { httpError } from '../../providers/errors.js';
import type { Json, LlmOverrides, Rewritten } from '../../providers/types.js';
import { missError } from '../../replay/miss.js';
import { scaledDelay, type OnMiss, type Timing } from '../../replay/modes.js';
import { createSessionPool, type SessionPlay } from '../../replay/session-pool.js';
import { encodeFrameData, frameBytes } from '../../tape/frame.js';
import type { RedactOptions } from '../../tape/redaction/redact.js';
import type { MatchInfo, WsFrame } from '../../tape/schema.js';
import { createSecretDetector } from '../../tape/redaction/secrets.js';
import { round } from '../../tape/sse.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import type { BodySpill } from '../../http/body-spill.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import { chosenProtocol, createClientServer, upgradeHeaders } from './client-server.js';
import { refuseRaw } from '../../http/raw-answer.js';
import { settled } from './recorder.js';
import { relaySession, type RelayOptions } from './relay.js';
import { messageFrame, spillsWhole } from './message-body.js';
import { closeWith, sessionTape } from './session-tape.js';
import type { SessionHandler, WsUpgrade } from './types.js';
import { wsCall } from './ws-call.js';
import type { FaultPlan, PickedFault } from '../../engine/faults/fault-plan.js';
import { elapsedSince } from '../../engine/call.js';
import { exchangeRecord } from '../../engine/record.js';

export interface SessionPlayerOptions {
  tape: LoadedTape;
  out: ExchangeLog;
  log: Logger;
  onMiss: OnMiss;
  timing: Timing;
  /** How secrets are recognised (a recorded marker matches the live secret). */
  redact?: RedactOptions;
  /** For sessions that go live: how long the upstream may take to switch protocols. */
  handshakeMs: number;
  /** Faults injected into the run (`--faults`): a session a rule picks is closed with its code after N server messages. */
  faults?: FaultPlan | undefined;
  /** Modified replay: the overrides for a session whose LLM calls go live, or undefined to play it from the tape. */
  live?: (call: { route: string; provider: string; model?: string | undefined }) => LlmOverrides | undefined;
  /** For sessions that go live: where messages too large to hold twice go as they are (the replay tape's store). */
  spill?: BodySpill;
}

/** Close code of a strict miss: policy violation, with the reason (at most 123 bytes) saying why. */
export const MISS_CLOSE_CODE = 1008;

const sleep = (ms: number): Promise<void> => (ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms)));

export function createSessionPlayer(opts: SessionPlayerOptions): SessionHandler {
  const wss = createClientServer();
  const secrets = createSecretDetector(opts.redact);
  const pool = createSessionPool(opts.tape.exchanges, {
    secrets,
    idKeys: (ex) => sessionIdKeys(detectSession(ex.route, ex.request.path, ex.upstream)),
  });
  const stops = new Set<() => void>();
  const register = (stop: () => void): (() => void) => {
    stops.add(stop);
    return () => void stops.delete(stop);
  };
  const relay = (up: WsUpgrade, extra: Pick<RelayOptions, 'match' | 'notes' | 'rewrite' | 'endNotes'>): void =>
    opts.out.track(
      relaySession(up, {
        writer: opts.out.writer,
        wss,
        log: opts.log,
        handshakeMs: opts.handshakeMs,
        onTapeFailure: 'serve',
        register,
        ...(opts.spill ? { spill: opts.spill } : {}),
        ...extra,
      }),
    );

  return {
    handle(up) {
      const api = detectSession(up.route.prefix, up.path, up.route.upstream);
      if (api !== undefined && opts.live !== undefined) {
        const request = { method: 'GET', path: up.path, query: up.query, headers: {}, body: { kind: 'empty' as const } };
        const overrides = opts.live({ route: up.route.prefix, provider: api.provider, model: api.reader.modelOf?.(request) });
        if (overrides !== undefined) return relayLive(up, api.reader, overrides, relay);
      }
      const play = pool.open(up.route.prefix, up.path, up.query);
      if (play === undefined) {
        if (opts.onMiss === 'live') return relay(up, { match: { kind: 'live', reason: 'no session recorded here: forwarded on a miss' } });
        return refuse(up, opts, api?.provider === undefined ? undefined : { provider: api.provider, api: api.adapter.api });
      }
      const facts = { route: up.route.prefix, provider: api?.provider, api: api?.adapter.api };
      const fault = opts.faults?.pick(facts, 'websocket');
      opts.out.track(settled(opts.log, up, playSession(up, play, opts, wss, register, api?.reader.missEvent, fault)));
    },
    closeAll() {
      for (const stop of stops) stop();
    },
  };
}

/** A live session with modified replay's overrides in its URL and its configuring messages; the replay tape says what changed. */
function relayLive(
  up: WsUpgrade,
  reader: NonNullable<ReturnType<typeof detectSession>>['reader'],
  overrides: LlmOverrides,
  relay: (up: WsUpgrade, extra: Pick<RelayOptions, 'match' | 'notes' | 'rewrite' | 'endNotes'>) => void,
): void {
  const applied: Rewritten['applied'] = {};
  const rewrite: NonNullable<RelayOptions['rewrite']> = {
    query: (q) => {
      if (reader.overrideQuery === undefined) return q;
      const out = reader.overrideQuery(q, overrides);
      Object.assign(applied, out.applied);
      return out.query;
    },
    clientJson: (json) => {
      if (reader.overrideMessage === undefined || json === null || typeof json !== 'object' || Array.isArray(json)) return json;
      const out = reader.overrideMessage(json as Json, overrides);
      Object.assign(applied, out.applied);
      return out.json;
    },
  };
  const changed = Object.keys(overrides).filter((k) => overrides[k as keyof LlmOverrides] !== undefined);
  relay(up, {
    match: {
      kind: 'live',
      reason: changed.length > 0 ? `llm live with ${changed.join(', ')} overridden` : 'llm live: the model is asked again',
    },
    notes: { llm: 'live' },
    rewrite,
    endNotes: () => (Object.keys(applied).length > 0 ? { overrides: applied } : undefined),
  });
}

/** No session recorded where this one connects: refused like an HTTP miss, and written to the replay tape as one. */
function refuse(up: WsUpgrade, opts: SessionPlayerOptions, api: { provider: string; api: string } | undefined): void {
  const asked = `WebSocket ${up.route.prefix}${up.path}`;
  const reason = 'the tape has no WebSocket session recorded at this route, path and query';
  const miss = missError({
    tape: opts.tape.name,
    asked,
    reason,
    onMiss: opts.onMiss,
    closest: [],
    noCandidates: '',
    details: { tape: opts.tape.name, onMiss: opts.onMiss, asked, reason },
    headers: { 'x-tapedeck-match': 'miss', 'x-should-retry': 'false' },
  });
  const answer = httpError(miss, api);
  refuseRaw(up.socket, answer);
  const call = wsCall(up);
  const response = { status: answer.status, headers: answer.headers, body: { kind: 'json' as const, json: answer.body } };
  opts.out.writer
    .append(exchangeRecord(call, { response, timing: { durationMs: elapsedSince(call) } }, { match: { kind: 'miss', reason } }))
    .catch((err: unknown) => opts.log.error({ err: (err as Error).message }, 'could not write a refused WebSocket session'));
  opts.log.info({ route: up.route.prefix, path: up.path }, 'replay miss: no WebSocket session recorded here');
}

async function playSession(
  up: WsUpgrade,
  play: SessionPlay,
  opts: SessionPlayerOptions,
  wss: ReturnType<typeof createClientServer>,
  register: (stop: () => void) => () => void,
  missEvent: ((message: string, client: unknown) => unknown) | undefined,
  fault?: PickedFault,
): Promise<void> {
  const elapsed = (): number => round(performance.now() - up.t0);
  const recorded = play.source;
  const head = recorded.response?.headers ?? {};
  const protocol = head['sec-websocket-protocol'];
  if (protocol !== undefined) chosenProtocol.set(up.req, protocol);
  upgradeHeaders.set(up.req, head);
  const client = await new Promise<WebSocket | undefined>((resolve) => {
    if (up.socket.destroyed) return resolve(undefined);
    up.socket.once('close', () => resolve(undefined));
    wss.handleUpgrade(up.req, up.socket, up.head, (ws) => resolve(ws));
  });
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
  const record = (frame: WsFrame | Promise<WsFrame>): void => void tape.add(frame).catch(() => undefined);

  // Everything the server says goes out through one queue, in order, each message at its (scaled) recorded gap from
  // the client message it answers.
  let queue: Promise<void> = Promise.resolve();
  let closed = false;
  // A fault that closes the session after N server messages: the Nth goes out, then the close.
  const faultClose = fault?.then.close;
  let served = 0;
  const closeByFault = (): void => {
    if (faultClose === undefined) return;
    deliver({ from: 'server', offsetMs: 0, kind: 'close', code: faultClose.code, reason: faultClose.reason ?? 'tapedeck fault' });
  };
  const deliver = (f: WsFrame): void => {
    if (closed || client.readyState !== WebSocket.OPEN) return;
    if (f.kind === 'close') {
      record({
        from: 'server',
        offsetMs: elapsed(),
        kind: 'close',
        ...(f.code !== undefined ? { code: f.code } : {}),
        ...(f.reason ? { reason: f.reason } : {}),
      });
      closeWith(client, f.code, f.reason ?? '');
      return;
    }
    const bytes = frameBytes(f);
    client.send(bytes, { binary: f.kind === 'binary' });
    // A large message goes on the replay tape as it is, from the bytes just sent (`message-body.ts`).
    record(
      spillsWhole(bytes, opts.spill)
        ? messageFrame('server', elapsed(), bytes, f.kind === 'binary', opts.spill)
        : { ...f, offsetMs: elapsed() },
    );
    if (faultClose !== undefined && ++served === faultClose.afterMessages) closeByFault();
  };
  const send = (frames: readonly WsFrame[], from: number): void => {
    const arrived = performance.now();
    queue = queue.then(async () => {
      for (const f of frames) {
        if (opts.timing.mode !== 'instant') await sleep(arrived + scaledDelay(f.offsetMs - from, opts.timing) - performance.now());
        deliver(f);
      }
    });
  };
  if (faultClose !== undefined && (faultClose.afterMessages ?? 0) === 0) queue = queue.then(closeByFault);
  send(play.opening(), recorded.timing.ttfbMs ?? 0);

  let answered = 0;
  let firstMiss: string | undefined;
  client.on('message', (data: Buffer, binary: boolean) => {
    const frame: WsFrame = { from: 'client', offsetMs: elapsed(), kind: binary ? 'binary' : 'text', data: encodeFrameData(data, binary) };
    record(spillsWhole(data, opts.spill) ? messageFrame('client', frame.offsetMs, data, binary, opts.spill) : frame);
    const outcome = play.next(frame);
    if (outcome.kind === 'match') {
      answered++;
      send(outcome.replies, outcome.turn.client.offsetMs);
      return;
    }
    firstMiss ??= outcome.reason;
    const strict = opts.onMiss !== 'lenient';
    const message = `tapedeck: no recording on tape "${opts.tape.name}" matches this message (${outcome.reason}; on-miss ${opts.onMiss}${
      opts.onMiss === 'live' ? ': a session cannot go live half-way, so strict' : ''
    })`;
    opts.log.info({ route: up.route.prefix, path: up.path, reason: outcome.reason }, 'replay miss in a WebSocket session');
    let json: unknown;
    try {
      json = binary ? undefined : JSON.parse(data.toString('utf8'));
    } catch {
      json = undefined;
    }
    const event = missEvent
      ? missEvent(message, json)
      : json !== undefined
        ? { type: 'error', error: { type: 'tapedeck_miss', message } }
        : undefined;
    queue = queue.then(() => {
      if (event !== undefined) deliver({ from: 'server', offsetMs: 0, kind: 'text', data: { kind: 'json', json: event } });
      if (strict) deliver({ from: 'server', offsetMs: 0, kind: 'close', code: MISS_CLOSE_CODE, reason: closeReason(outcome.reason) });
    });
  });
  client.on('error', () => undefined);
  const done = new Promise<{ code: number; reason: Buffer }>((resolve) =>
    client.once('close', (code: number, reason: Buffer) => resolve({ code, reason })),
  );
  const unregister = register(() => {
    client.close(1001, 'tapedeck stopped');
    setTimeout(() => client.terminate(), 1000).unref();
  });
  const { code, reason } = await done;
  closed = true;
  unregister();
  play.done();
  if (code !== 1006)
    record({
      from: 'client',
      offsetMs: elapsed(),
      kind: 'close',
      ...(code === 1005 ? {} : { code }),
      ...(reason.byteLength > 0 ? { reason: reason.toString('utf8') } : {}),
    });
  const match: MatchInfo = {
    kind: firstMiss === undefined ? 'exact' : 'miss',
    source: play.source.id,
    stage: 'session',
    reason: firstMiss ?? `${answered} client message(s) answered from recording #${play.source.id}`,
  };
  const notes = fault === undefined ? {} : { notes: { fault: fault.description } };
  await tape.end({ durationMs: elapsed(), match, ...notes }).catch(() => undefined);
}

/** A close reason fits in 123 bytes. */
function closeReason(reason: string): string {
  let out = `tapedeck replay miss: ${reason}`;
  while (Buffer.byteLength(out) > 123) out = out.slice(0, -4) + '...';
  return out;
}
