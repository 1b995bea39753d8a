/**
 * The live forward's answer, from its head to its last byte (`forward.ts` asks, this relays and captures): the bytes
 * go to the client as they come, a turn's bytes in one write; the tape gets an SSE answer event by event with each
 * event's offset from the request start, any other body whole, and what grows too large to hold goes to the store as
 * it streams. Its own file because it is most of the forward; the request, a failure before any answer and the record
 * stay in `forward.ts`. One object per answer with its steps as methods, and the object itself as the body's handlers:
 * the forward runs for every recorded request, and this allocates no more per request than the closures it replaced.
 */
import type { Transform } from 'node:stream';
import { brotliDecompressSync, createBrotliDecompress, createGunzip, createInflate, gunzipSync, inflateSync } from 'node:zlib';
import type { Call } from '../engine/call.js';
import type { Answer } from '../engine/record.js';
import { requestMeaning } from '../http/request-meaning.js';
import { clientHeaderMap, headerMapOf, tapeResponseHeaders } from '../http/headers.js';
import type { ResponseSink } from '../http/sink.js';
import type { ProxyRequest } from '../http/types.js';
import { startEventSpill, startSpill, type BodySpill, type EventSpilling, type Spilling } from '../http/body-spill.js';
import { describeStream, type StreamDescriber } from '../providers/describe.js';
import { encodeWireBody } from '../tape/body.js';
import type { FrameDecoder, StreamEvent } from '../tape/framing/framing.js';
import { framingFor } from '../tape/framing/registry.js';
import { roundMs } from '../tape/timing.js';
import type { Body, ExchangeError, HeaderMap } from '../tape/schema.js';
import type { NewExchange } from '../tape/stores/tape-writer.js';
import type { WireText } from '../tape/store.js';
import { toExchangeError } from './exchange-error.js';
import type { BodyHandlers, UpstreamBody, UpstreamResponse } from './upstream-request.js';

/** The request whose answer this is, as the forward holds it (`Forwarding` in `forward.ts`). */
export interface Forwarded {
  readonly req: ProxyRequest;
  readonly sink: ResponseSink;
  readonly call: Call;
  /** The forward's options this reads (`ForwardOptions`). */
  readonly opts: {
    body?: Buffer | undefined;
    headers?: HeaderMap | undefined;
    commit?: ((answer: Answer) => Promise<boolean>) | undefined;
    spill?: BodySpill | undefined;
  };
  /** The client went away already. */
  readonly clientGone: boolean;
  /** Milliseconds since the request arrived, rounded as the tape keeps them. */
  elapsed(): number;
}

export type TapedResponse = NonNullable<NewExchange['response']>;

export class AnswerStream implements BodyHandlers {
  /** When the first body byte arrived; why the answer ended early, if it did. */
  ttfbMs: number | undefined;
  failure: ExchangeError | undefined;
  /** The text a JSON answer came as (once `tapeResponse` has run): the tape line takes it as it is. */
  bodyText: WireText<Body> | undefined;
  /** A stream spilled to the store is described as it goes (its events are not kept to be read again). */
  describer: StreamDescriber | undefined;

  private readonly fwd: Forwarded;
  private readonly status: number;
  private readonly body: UpstreamBody;
  private readonly headers: HeaderMap;
  private readonly stream: boolean;
  /** The stream's framing's decoder (`tape/framing/`), when the answer is a stream a framing claims. */
  private readonly splitter: FrameDecoder | undefined;
  // A server may compress its stream whatever accept-encoding said: events are split from the decoded bytes, while
  // the client gets the bytes as they came.
  private readonly inflate: Transform | undefined;
  private readonly inflated: Promise<void> | undefined;
  // A body that grows past the spill limit goes to the store as it comes (not when the tape would hold it encoded).
  private readonly spillAt: number | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private spilling: Spilling | undefined;
  // A stream that grows past the spill limit goes to the store event by event from then on (`response.eventsFile`);
  // a smaller one stays in the line, as it always has.
  private readonly spillEventsAt: number | undefined;
  private readonly events: StreamEvent[] = [];
  private streamed = 0;
  private eventSpill: EventSpilling | undefined;
  // The events of one turn arrived together (one read from the upstream, one chunk of a decompressor): one offset
  // for all of them, read once.
  private turnAt: number | undefined;

  // With `commit`, an answer with a length holds its latest bytes back (see `sendHead`).
  private holdLast = false;
  private held: Buffer | undefined;
  // What arrives in one turn goes to the client in one write at the end of the turn (a microtask: no later than it
  // would have gone), split into events in one pass. One read from the upstream often holds many chunks (an SSE
  // stream's events, each in its own HTTP chunk), and every write to the client costs its own chunk framing and a
  // pass through node's streams.
  private arrived: Buffer[] = [];
  private flushQueued = false;
  private readonly flushTurn = (): void => this.flush();
  private settled = false;
  private settle: ((ended: boolean) => void) | undefined;

  constructor(fwd: Forwarded, upstream: UpstreamResponse) {
    this.fwd = fwd;
    this.status = upstream.statusCode;
    this.body = upstream.body;
    const headers = headerMapOf(upstream.headers);
    this.headers = headers;
    // The framing is chosen once, from the answer's head: SSE, or whatever a provider registered for its content type.
    const framing = framingFor(headers['content-type']);
    const stream = framing !== undefined;
    this.stream = stream;
    const encoded = headers['content-encoding'] !== undefined && headers['content-encoding'].toLowerCase() !== 'identity';
    const spill = fwd.opts.spill;
    this.spillAt = stream || encoded ? undefined : spill?.limit;
    this.splitter = framing?.decoder();
    this.spillEventsAt = this.splitter && spill?.eventLines !== undefined ? spill.limit : undefined;
    const inflate = this.splitter ? decompressor(headers['content-encoding']) : undefined;
    this.inflate = inflate;
    inflate?.on('data', (bytes: Buffer) => this.split(bytes));
    // What cannot be decoded (a stream that only claimed to be compressed) stays out of the events; the client has
    // the bytes either way. The decoder is done when it ends or fails, whichever comes first.
    inflate?.on('error', () => undefined);
    this.inflated = inflate && new Promise<void>((resolve) => inflate.once('end', resolve).once('error', () => resolve()));
  }

  /** The answer's head to the client: the upstream's headers less hop-by-hop ones, with the forward's own. */
  sendHead(): void {
    const stream = this.stream;
    const headers = this.headers;
    const out = clientHeaderMap(headers);
    // The bytes pass through untouched, so the upstream's length still holds: one write, no chunked encoding.
    if (!stream && headers['content-length'] !== undefined) out['content-length'] = headers['content-length'];
    if (stream) {
      out['cache-control'] ??= 'no-cache';
      out['x-accel-buffering'] = 'no';
    }
    const extra = this.fwd.opts.headers;
    this.fwd.sink.head(this.status, extra ? { ...out, ...extra } : out);
    // With `commit`, the answer is not complete for the client until the exchange is on the tape: a client that has
    // the whole answer knows it is recorded, even if tapedeck is killed the next instant. A chunked answer (any stream)
    // is complete only at its last chunk, sent by `end()`, so its events flow at once; an answer with a length is
    // complete at its last byte, so the latest bytes (those of the last turn) are held back.
    this.holdLast = this.fwd.opts.commit !== undefined && out['content-length'] !== undefined;
  }

  /** Read the body to its end; resolves true when it ended, false when it failed or its client went away. */
  relay(): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      this.settle = resolve;
      if (this.fwd.clientGone) this.clientLeft();
      this.body.read(this);
    });
  }

  /** The client went away: the upstream's answer is abandoned, the exchange says why. */
  clientLeft(): void {
    this.failure ??= { code: 'CLIENT_CLOSED', message: 'client went away before the response ended', phase: 'stream' };
    this.take();
    this.body.destroy();
    this.settleWith(false);
  }

  data(chunk: Buffer): void {
    this.ttfbMs ??= this.fwd.elapsed();
    // An uncompressed stream is split with the rest of the turn's bytes, by `take`.
    if (this.inflate) {
      if (!this.inflate.destroyed) this.inflate.write(chunk);
    } else if (this.spilling) this.spilling.write(chunk);
    else if (this.splitter === undefined) this.keep(chunk);
    this.send(chunk);
  }

  end(): void {
    this.flush();
    // The answer ends once it is on the tape (a turn or so from now): what was written in this turn waits for the
    // end, and head, body and last chunk go out in one write (a small answer comes in one read).
    if (this.fwd.opts.commit) this.fwd.sink.hold?.();
    const inflate = this.inflate;
    if (inflate === undefined || this.inflated === undefined) return this.settleWith(true);
    if (!inflate.destroyed) inflate.end();
    void this.inflated.then(() => this.settleWith(true));
  }

  error(err: Error): void {
    if (this.settled) return;
    this.failure ??= toExchangeError(err, 'stream');
    // Pass the reset on once the client has every byte that arrived before it.
    this.flush();
    if (this.held !== undefined) this.fwd.sink.write(this.held);
    this.held = undefined;
    this.fwd.sink.cut();
    this.settleWith(false);
  }

  /** The response as the tape records it, once the body is done (a spilled body or stream finished in the store). */
  async tapeResponse(): Promise<TapedResponse> {
    const response: TapedResponse = { status: this.status, headers: tapeResponseHeaders(this.headers) };
    const splitter = this.splitter;
    if (splitter) {
      this.capture(splitter.end());
      await this.tapeEvents(response);
      const rest = splitter.rest();
      if (rest !== '') response.tail = rest;
    } else if (this.spilling) {
      try {
        response.body = (await this.spilling.end()).body;
      } catch (err) {
        this.failure ??= toExchangeError(err, 'stream');
        response.body = { kind: 'empty' };
      }
    } else {
      const wire = encodeWireBody(
        decodeContent(Buffer.concat(this.chunks), this.headers['content-encoding']),
        this.headers['content-type'],
      );
      response.body = wire.body;
      if (wire.text !== undefined) this.bodyText = { of: wire.body, text: wire.text };
    }
    return response;
  }

  /** The client's answer ends (its held bytes with it), or is cut when the exchange could not be put on the tape. */
  finish(committed: boolean): void {
    const sink = this.fwd.sink;
    if (!committed)
      sink.cut(); // not on the tape: the client must not take it for a complete answer
    else {
      if (this.held !== undefined) sink.write(this.held);
      sink.end();
    }
  }

  private settleWith(ended: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.settle?.(ended);
  }

  /** A body (not a stream) kept for the tape: in memory, or in the store once it is past the spill limit. */
  private keep(chunk: Buffer): void {
    this.chunks.push(chunk);
    const spill = this.fwd.opts.spill;
    if (this.spillAt !== undefined && (this.size += chunk.byteLength) > this.spillAt && spill) {
      this.spilling = startSpill(spill, this.chunks, this.headers['content-type']);
      this.chunks.length = 0;
    }
  }

  /** The stream's events for the tape: in the line, or the rest of them to the store when it spilled. */
  private async tapeEvents(response: TapedResponse): Promise<void> {
    if (this.eventSpill === undefined) {
      response.events = this.events;
      return;
    }
    this.spillEvents();
    try {
      response.eventsFile = await this.eventSpill.end();
    } catch (err) {
      this.failure ??= toExchangeError(err, 'stream');
      response.events = [];
    }
  }

  private capture(events: StreamEvent[]): void {
    if (events.length === 0) return;
    if (this.turnAt === undefined) {
      this.turnAt = roundMs(this.fwd.elapsed());
      queueMicrotask(() => (this.turnAt = undefined));
    }
    for (const ev of events) {
      ev.offsetMs = this.turnAt;
      this.events.push(ev);
    }
  }

  private spillEvents(): void {
    const fwd = this.fwd;
    if (this.eventSpill === undefined) {
      this.eventSpill = fwd.opts.spill && startEventSpill(fwd.opts.spill);
      if (this.eventSpill === undefined) return;
      // The request's meaning as computed once for it, unless another body was sent (a modified replay).
      this.describer = describeStream(
        { ...fwd.call, response: undefined },
        fwd.opts.body === undefined ? { llm: requestMeaning(fwd.req).llm } : undefined,
      );
    }
    const events = this.events;
    if (events.length === 0) return;
    this.describer?.push(events);
    this.eventSpill.write(events);
    events.length = 0;
  }

  private split(bytes: Buffer): void {
    if (this.splitter !== undefined) this.capture(this.splitter.feed(bytes));
    if (this.spillEventsAt !== undefined && (this.streamed += bytes.byteLength) > this.spillEventsAt) this.spillEvents();
  }

  /** This turn's bytes, joined, with an uncompressed stream's events split from them (a compressed one's come from `inflate`). */
  private take(): Buffer | undefined {
    this.flushQueued = false;
    const arrived = this.arrived;
    if (arrived.length === 0) return undefined;
    const bytes = arrived.length === 1 ? (arrived[0] as Buffer) : Buffer.concat(arrived);
    this.arrived = [];
    if (this.splitter && !this.inflate) this.split(bytes);
    return bytes;
  }

  private flush(): void {
    const bytes = this.take();
    if (bytes === undefined) return;
    // With a length, the latest bytes wait (see holdLast); those before them go now.
    const now = this.holdLast ? this.held : bytes;
    if (this.holdLast) this.held = bytes;
    if (now !== undefined && !this.fwd.sink.write(now)) {
      const body = this.body;
      body.pause();
      this.fwd.sink.onDrain(() => body.resume());
    }
  }

  private send(chunk: Buffer): void {
    this.arrived.push(chunk);
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flushTurn);
    }
  }
}

/** A streaming decoder for a compressed event stream, or undefined when it is not compressed (or not in a known way). */
function decompressor(encoding: string | undefined): Transform | undefined {
  switch (encoding?.toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return undefined;
  }
}

/** Decode a compressed body for the tape (the client still gets the original bytes). */
function decodeContent(bytes: Buffer, encoding: string | undefined): Buffer {
  try {
    switch (encoding?.toLowerCase()) {
      case 'gzip':
      case 'x-gzip':
        return gunzipSync(bytes);
      case 'deflate':
        return inflateSync(bytes);
      case 'br':
        return brotliDecompressSync(bytes);
      default:
        return bytes;
    }
  } catch {
    return bytes;
  }
}
