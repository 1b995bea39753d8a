/**
 * The HTTP transport's part of a settle (`engine/settle.ts`): the decided answer sent in HTTP's framing, with a fault's
 * disturbance on top (`http/fault-sink.ts`), its record handed to the tee before the client gets its end. Forwarded
 * answers stream from the upstream (`upstream/forward.ts`), recorded ones from the tape at the client's pace
 * (`serve-recorded.ts`), made ones (a mock, a miss, a responder's own, an injected status) whole or as the stream they
 * are; a protocol (MCP) answers message by message through settles of its own.
 */
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Cancel } from '../../engine/cancel.js';
import { elapsedSince } from '../../engine/call.js';
import type { Answer } from '../../engine/record.js';
import type { Injected } from '../../engine/decision.js';
import type { Decided } from '../../engine/settle.js';
import type { Tee } from '../../engine/tee.js';
import { copyBlob, type BodySpill, type ReplayBlobs } from '../../http/body-spill.js';
import { faultSink, type FaultSink } from '../../http/fault-sink.js';
import { matchHeaders } from '../../http/headers.js';
import { requestMeaning } from '../../http/request-meaning.js';
import { paced } from '../../http/sink-send.js';
import type { ResponseSink } from '../../http/sink.js';
import type { Message } from '../../providers/mcp.js';
import type { ProxyRequest, ResponderAnswer, Timing } from '../../http/types.js';
import { encodeWireBody } from '../../tape/body.js';
import { framingFor } from '../../tape/framing/registry.js';
import type { StreamEvent } from '../../tape/framing/framing.js';
import type { ResponseRecord } from '../../tape/schema.js';
import { roundMs } from '../../tape/timing.js';
import { forwardAndCapture } from '../../upstream/forward.js';
import { rewriteLegacyEndpoint } from '../../upstream/legacy-endpoint.js';
import type { OAuthRouted } from '../../upstream/oauth-front.js';
import type { HttpDecision } from './decide.js';
import { injectedAnswer } from './injected.js';
import type { RecordedAnswers } from './recorded-answers.js';
import { serveRecorded } from './serve-recorded.js';

/** What delivering needs beside the decision: the live forward's, and a replay's recorded answers. */
export interface DeliverOptions {
  dispatcher: Dispatcher;
  /** Aborted when tapedeck stops: live requests still waiting for their upstream end, written with the error. */
  stopping?: Cancel | undefined;
  /** Where a body too large to hold goes as it streams (the tape being written). */
  spill?: BodySpill | undefined;
  timing: Timing;
  /** Replay: bodies too large to hold, streamed from the tape's store and copied to the replay tape's. */
  blobs?: ReplayBlobs | undefined;
  answers?: RecordedAnswers | undefined;
  /** A live answer's request as the upstream gets it, and its answer's sink for the client (`oauth-front.ts`). */
  routed?: OAuthRouted | undefined;
}

/** Send what was decided for `req` to `to`; resolves once the answer has ended (or failed, or its client left). */
export async function deliverHttp(
  req: ProxyRequest,
  res: ServerResponse,
  to: ResponseSink,
  decided: Decided<HttpDecision>,
  opts: DeliverOptions,
): Promise<void> {
  const { decision: d, disturb } = decided;
  // A forwarded answer is read to its end even when a fault cuts its client.
  const faulted = disturb === undefined ? undefined : faultSink(to, disturb, { keepReading: d.how === 'forward' });
  const sink = faulted ?? to;
  const tee = faulted === undefined || disturb === undefined ? decided.tee : cutMarked(decided.tee, faulted, disturb);
  if (tee !== decided.tee) decided = { ...decided, tee };
  switch (d.how) {
    case 'forward': {
      // OAuth through a route: the flow's requests go to the real servers, the client sees tapedeck's URLs
      // (`oauth-front.ts`). MCP legacy HTTP+SSE: the client must POST back through the route prefix (a no-op for
      // anything but a GET event stream).
      const legacy = rewriteLegacyEndpoint(req, sink);
      const sent = opts.routed?.req ?? { ...req, ...(d.path !== undefined ? { path: d.path } : {}) };
      await forwardAndCapture(sent, opts.routed?.sink(legacy) ?? legacy, {
        dispatcher: opts.dispatcher,
        call: decided.call,
        commit: (answer) => tee.commit(answer),
        ...(d.body !== undefined ? { body: d.body } : {}),
        ...(d.headers !== undefined ? { headers: d.headers } : {}),
        ...(opts.stopping ? { stopping: opts.stopping } : {}),
        ...(opts.spill ? { spill: opts.spill } : {}),
      });
      return;
    }
    case 'recorded':
      return deliverRecorded(d, sink, decided, opts);
    case 'made':
      return deliverMade(d.answer, sink, decided);
    case 'injected': {
      const injected = injectedAnswer(d.fault, requestMeaning(req).api, decided.call, rpcRequestOf(req));
      if (injected.reset) {
        await tee.commit(injected.answer);
        res.socket?.destroy();
        return;
      }
      return deliverMade(injected.made, sink, decided, injected.answer);
    }
    case 'protocol':
      return d.protocol(sink);
  }
}

/** The one JSON-RPC request a POST's body carries, if it carries one (an MCP rule picked it: `httpFaultFacts`). */
function rpcRequestOf(req: ProxyRequest): Message | undefined {
  const body = requestMeaning(req).record.body;
  if (body.kind !== 'json') return undefined;
  const m = body.json as Message | null;
  return m !== null && typeof m === 'object' && !Array.isArray(m) && typeof m.method === 'string' && m.id !== undefined ? m : undefined;
}

/**
 * The tee of an answer a fault disturbs: when the rule cut it, the record keeps what the client got (the events that
 * went through) and an error saying where it was cut (`FAULT_CUT`), so the tape never holds more than the client had.
 */
function cutMarked(tee: Tee, sink: FaultSink, fault: Injected): Tee {
  const mark = (a: Answer): Answer => {
    const { events, bytes, cut } = sink.passed;
    if (!cut) return a;
    const response = a.response?.events ? { ...a.response, events: a.response.events.slice(0, events) } : a.response;
    const at = fault.cut?.afterEvents !== undefined ? `${events} event(s)` : `${bytes} byte(s)`;
    const error = { code: 'FAULT_CUT', message: `cut after ${at} by fault rule ${fault.rule}`, phase: 'stream' as const };
    const { responseText: _text, ...rest } = a;
    return { ...(response === a.response ? a : rest), response, error };
  };
  return {
    record: (a) => tee.record(mark(a)),
    commit: (a) => tee.commit(mark(a)),
    finish: (a, to) => tee.finish(mark(a), to),
    keep: (a) => tee.keep(Promise.resolve(a).then(mark)),
    begin: (a) => tee.begin(a),
  };
}

/**
 * A recorded answer, at the client's pace: the tee commits its record when everything but the end has been written,
 * then the client gets the end. A body or stream too large to hold is copied to the replay tape's store while it is
 * served, and the end waits for the copy too.
 */
async function deliverRecorded(
  d: Extract<HttpDecision, { how: 'recorded' }>,
  sink: ResponseSink,
  decided: Decided<HttpDecision>,
  opts: DeliverOptions,
): Promise<void> {
  const { call, tee } = decided;
  const served = d.served;
  const response = copiedParts(served.response, opts.blobs);
  // The copy reads the side file as the client is served: one found damaged fails it before the answer's end asks for
  // it (then the client's answer is cut); handled here so that it is not an unhandled rejection meanwhile.
  if (response instanceof Promise) response.catch(() => undefined);
  const answerNow = async (): Promise<Answer> => ({
    response: await response,
    error: served.error,
    timing: { ttfbMs: served.timing.ttfbMs, durationMs: elapsedSince(call) },
    responseText: d.text,
  });
  const gate = endGate(sink, tee, answerNow);
  await serveRecorded(served, gate.sink, {
    timing: opts.timing,
    headers: matchHeaders(d.match),
    open: opts.blobs?.open,
    ...(opts.answers
      ? { bytes: (body) => (opts.answers as RecordedAnswers).bytesOf(body), stream: (r) => (opts.answers as RecordedAnswers).streamOf(r) }
      : {}),
  });
  await gate.done();
}

/** The response with its parts stored apart copied to the replay tape's store (as they stream), when it has any. */
function copiedParts(
  response: ResponseRecord | undefined,
  blobs: ReplayBlobs | undefined,
): ResponseRecord | undefined | Promise<ResponseRecord> {
  const body = response?.body?.kind === 'file' ? response.body : undefined;
  const stream = response?.eventsFile;
  if (response === undefined || blobs === undefined || (body === undefined && stream === undefined)) return response;
  return (async () => {
    const copied = { ...response };
    if (body !== undefined) copied.body = await copyBlob(blobs.open(body), blobs.spill, body.encoding);
    if (stream !== undefined)
      copied.eventsFile = {
        ...(await copyBlob(blobs.open(stream), blobs.spill, stream.encoding)),
        encoding: 'text',
        events: stream.events,
      };
    return copied;
  })();
}

/**
 * A sink whose end (or cut) waits for the tee: the record is committed first, then the client gets the end (or the
 * cut, when it could not be). `done` resolves once the record is committed, whether or not an end came (a client that
 * left gets none, and the record is still kept).
 */
function endGate(sink: ResponseSink, tee: Tee, answer: () => Promise<Answer>): { sink: ResponseSink; done(): Promise<void> } {
  let committed: Promise<unknown> | undefined;
  const commitThen = (then: (ok: boolean) => void): void => {
    sink.hold?.();
    committed ??= answer().then(
      (a) => tee.commit(a).then(then),
      () => sink.cut(),
    );
  };
  const gated: ResponseSink = {
    head: (status, headers) => sink.head(status, headers),
    write: (chunk) => sink.write(chunk),
    onDrain: (cb) => sink.onDrain(cb),
    onClose: (cb) => sink.onClose(cb),
    end: () => commitThen((ok) => (ok ? sink.end() : sink.cut())),
    cut: () => commitThen(() => sink.cut()),
  };
  return {
    sink: gated,
    done: () => {
      committed ??= tee.keep(answer());
      return committed.then(() => undefined);
    },
  };
}

/**
 * An answer tapedeck (or a responder) made: its head and body (or its stream, chunk by chunk at the client's pace, the
 * tape keeping a stream its framing splits event by event), then the record, then the end. `recorded`: what the tape
 * keeps when it is not what was sent (an injected fault's answer is recorded as the provider's body, said as JSON).
 */
async function deliverMade(answer: ResponderAnswer, sink: ResponseSink, decided: Decided<HttpDecision>, recorded?: Answer): Promise<void> {
  const { call, tee } = decided;
  const headers = { ...answer.headers };
  const contentType = answer.json !== undefined ? (headers['content-type'] ??= 'application/json') : headers['content-type'];
  if (answer.stream === undefined) {
    const bytes =
      answer.json !== undefined
        ? Buffer.from(JSON.stringify(answer.json))
        : answer.body === undefined
          ? undefined
          : Buffer.from(answer.body);
    sink.head(answer.status, headers);
    if (bytes !== undefined && bytes.byteLength > 0) sink.write(bytes);
    const response: ResponseRecord = { status: answer.status, headers };
    if (answer.json !== undefined) response.body = { kind: 'json', json: answer.json };
    else response.body = bytes === undefined ? { kind: 'empty' } : encodeWireBody(bytes, contentType).body;
    sink.hold?.();
    await tee.finish(recorded ?? { response, timing: { durationMs: elapsedSince(call) } }, sink);
    return;
  }
  await deliverMadeStream(answer, headers, sink, decided);
}

/** A made answer that streams: written chunk by chunk at the client's pace; a stream its framing knows kept event by event. */
async function deliverMadeStream(
  answer: ResponderAnswer,
  headers: Record<string, string>,
  sink: ResponseSink,
  { call, tee }: Decided<HttpDecision>,
): Promise<void> {
  sink.head(answer.status, headers);
  const framing = framingFor(headers['content-type']);
  const decoder = framing?.decoder();
  const events: StreamEvent[] = [];
  const chunks: Buffer[] = [];
  const out = paced(sink);
  let gone = false;
  for await (const chunk of answer.stream as AsyncIterable<string | Uint8Array>) {
    const bytes = Buffer.from(chunk);
    if (decoder !== undefined) for (const ev of decoder.feed(bytes)) events.push({ ...ev, offsetMs: roundMs(elapsedSince(call)) });
    else chunks.push(bytes);
    if (!(await out.write(bytes))) {
      gone = true;
      break;
    }
  }
  const response: ResponseRecord = { status: answer.status, headers };
  if (decoder !== undefined) {
    for (const ev of decoder.end()) events.push({ ...ev, offsetMs: roundMs(elapsedSince(call)) });
    response.events = events;
    if (decoder.rest() !== '') response.tail = decoder.rest();
  } else response.body = encodeWireBody(Buffer.concat(chunks), headers['content-type']).body;
  const done: Answer = { response, timing: { durationMs: elapsedSince(call) } };
  if (gone) {
    done.error = { code: 'CLIENT_CLOSED', message: 'client went away before the response ended', phase: 'stream' };
    await tee.keep(done);
    return;
  }
  await tee.finish(done, { end: () => out.end(), cut: () => sink.cut() });
}
