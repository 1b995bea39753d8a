/**
 * An answer with a fault on top (`--faults`): whatever the answer is (from the tape, live, a responder's), it reaches
 * the client through this sink, which holds its first byte back, spaces its events out, or cuts the connection after
 * N events or N bytes, as the rule says. A stream's events are found by its framing (`tape/framing/`, chosen from the
 * head it passes on: SSE, or a provider's), and each goes on as its framing writes it. It counts what it let through,
 * for the replay tape.
 */
import type { Injected } from '../engine/decision.js';
import { restBytes, type FrameDecoder, type StreamEvent, type StreamFraming } from '../tape/framing/framing.js';
import { framingFor } from '../tape/framing/registry.js';
import type { ResponseSink } from './sink.js';

export interface FaultSink extends ResponseSink {
  /** What went through: complete SSE events, body bytes, and whether the connection was cut by the rule. */
  readonly passed: { events: number; bytes: number; cut: boolean };
  /** Resolves once the answer has ended, been cut, or its client has gone. */
  readonly finished: Promise<void>;
}

type Op =
  { kind: 'head'; status: number; headers: Record<string, string> } | { kind: 'write'; chunk: Buffer } | { kind: 'end' } | { kind: 'cut' };

const bytesOf = (wire: string | Uint8Array): Buffer =>
  typeof wire === 'string' ? Buffer.from(wire) : Buffer.from(wire.buffer, wire.byteOffset, wire.byteLength);

/**
 * `keepReading`: the answer's source keeps going after a cut (a live forward reads the upstream's answer to its end,
 * for the tape), so the cut is not passed on as the client leaving; only the client really leaving is.
 */
export function faultSink(sink: ResponseSink, then: Pick<Injected, 'cut' | 'delay'>, opts: { keepReading?: boolean } = {}): FaultSink {
  const passed = { events: 0, bytes: 0, cut: false };
  const queue: Op[] = [];
  const drains: (() => void)[] = [];
  let pumping = false;
  let started = false;
  let done = false;
  const firstByteMs = then.delay?.firstByteMs ?? 0;
  const betweenMs = then.delay?.betweenEventsMs ?? 0;
  const cutEvents = then.cut?.afterEvents;
  const cutBytes = then.cut?.afterBytes;
  const splitEvents = betweenMs > 0 || cutEvents !== undefined;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  // A delay ends early when its client goes (tapedeck stopping closes it too), and never keeps the process alive by
  // itself: a rule may hold an answer back for days (fault-rules.ts: MAX_DELAY_MS), and a stop does not wait for it.
  let holding: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        holding = undefined;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      holding = { timer, wake };
    });
  sink.onClose(() => {
    done = true;
    queue.length = 0;
    holding?.wake();
    finish();
  });

  const cutNow = (): void => {
    passed.cut = true;
    done = true;
    queue.length = 0;
    sink.cut();
    finish();
  };

  /** Pass one piece of the body on: at most up to the byte limit; resolves once the client can take more. */
  const pass = async (piece: Buffer): Promise<void> => {
    let out = piece;
    if (cutBytes !== undefined && passed.bytes + out.byteLength >= cutBytes) out = out.subarray(0, cutBytes - passed.bytes);
    passed.bytes += out.byteLength;
    if (out.byteLength > 0 && !sink.write(out)) await new Promise<void>((r) => sink.onDrain(r));
    if (cutBytes !== undefined && passed.bytes >= cutBytes) cutNow();
  };

  // A stream's events, found by its framing when events are spaced out or counted (a partial one waits for its end).
  let framing: StreamFraming | undefined;
  let decoder: FrameDecoder | undefined;
  const passEvents = async (events: readonly StreamEvent[]): Promise<void> => {
    for (const ev of events) {
      if (done) return;
      if (passed.events > 0 && betweenMs > 0) await sleep(betweenMs);
      await pass(bytesOf((framing as StreamFraming).encode(ev)));
      if (done) return;
      passed.events++;
      if (cutEvents !== undefined && passed.events >= cutEvents) return cutNow();
    }
  };
  const write = async (chunk: Buffer): Promise<void> => {
    if (decoder === undefined) return pass(chunk);
    await passEvents(decoder.feed(chunk));
  };
  /** The end of the body: what its end completes, then whatever came after the last whole event. */
  const flushRest = async (): Promise<void> => {
    if (decoder === undefined || framing === undefined) return;
    await passEvents(decoder.end());
    const rest = decoder.rest();
    if (!done && rest !== '') await pass(bytesOf(restBytes(framing, rest)));
  };

  const pump = async (): Promise<void> => {
    if (pumping) return;
    pumping = true;
    if (!started) {
      started = true;
      if (firstByteMs > 0) await sleep(firstByteMs);
    }
    while (queue.length > 0 && !done) {
      const op = queue.shift() as Op;
      if (op.kind === 'head') {
        framing = splitEvents ? framingFor(op.headers['content-type']) : undefined;
        decoder = framing?.decoder();
        sink.head(op.status, op.headers);
        if (cutEvents === 0 || cutBytes === 0) cutNow();
      } else if (op.kind === 'write') await write(op.chunk);
      else if (op.kind === 'end') {
        await flushRest();
        if (!done) sink.end();
        done = true;
        finish();
      } else {
        done = true;
        sink.cut();
        finish();
      }
    }
    pumping = false;
    if (queue.length === 0) for (const cb of drains.splice(0)) cb();
  };
  const push = (op: Op): boolean => {
    if (done) return true;
    queue.push(op);
    void pump();
    return queue.length === 0 && !pumping;
  };

  return {
    passed,
    finished,
    head: (status, headers) => void push({ kind: 'head', status, headers }),
    write: (chunk) => push({ kind: 'write', chunk: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) }),
    onDrain: (cb) => {
      if (queue.length === 0 && !pumping) queueMicrotask(cb);
      else drains.push(cb);
    },
    end: () => void push({ kind: 'end' }),
    cut: () => void push({ kind: 'cut' }),
    onClose: (cb) => sink.onClose(() => (opts.keepReading === true && passed.cut ? undefined : cb())),
  };
}
