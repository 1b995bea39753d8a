/**
 * The promises every framing keeps (`src/tape/framing/framing.ts`), as one suite a framing runs with streams of its
 * own: SSE (`framing-contract.test.ts`), and any a provider adds (NDJSON, AWS event-stream). A framing passes when a
 * stream split into events and written back is the same bytes, whatever pieces the bytes came in, when its events
 * survive a tape line, and when a stream cut mid-event keeps the partial event as its rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restBytes, type StreamEvent, type StreamFraming } from '../../src/tape/framing/framing.js';
import { framingFor, registerFraming } from '../../src/tape/framing/registry.js';
import { SseEventSchema } from '../../src/tape/schema.js';

export interface FramingSample {
  /** What the stream is, for the test's name. */
  name: string;
  /** The stream's bytes, whole, as an upstream sends them. */
  bytes: Uint8Array;
  /** How many events it holds. */
  events: number;
}

export interface FramingContractOptions {
  /** Content types (as servers send them) this framing must be chosen for, and some it must not. */
  contentTypes: readonly string[];
  notContentTypes: readonly string[];
  /** Whole streams, each ending on an event boundary. */
  samples: readonly FramingSample[];
}

const toBuffer = (wire: string | Uint8Array): Buffer =>
  typeof wire === 'string' ? Buffer.from(wire) : Buffer.from(wire.buffer, wire.byteOffset, wire.byteLength);

/** The events and rest of `bytes` fed in the given pieces (sizes, repeated until the bytes run out). */
export function decodeIn(framing: StreamFraming, bytes: Uint8Array, sizes: readonly number[]): { events: StreamEvent[]; rest: string } {
  const decoder = framing.decoder();
  const events: StreamEvent[] = [];
  let i = 0;
  for (let at = 0; at < bytes.byteLength; i++) {
    const n = sizes[i % sizes.length] as number;
    events.push(...decoder.feed(bytes.subarray(at, at + n)));
    at += n;
  }
  events.push(...decoder.end());
  return { events, rest: decoder.rest() };
}

/** The bytes a framing writes for these events and rest. */
export function encodeAll(framing: StreamFraming, events: readonly StreamEvent[], rest: string): Buffer {
  const parts = events.map((ev) => toBuffer(framing.encode(ev)));
  if (rest !== '') parts.push(toBuffer(restBytes(framing, rest)));
  return Buffer.concat(parts);
}

/** A seeded generator of piece sizes (1 to 9 bytes), so a failure repeats. */
function randomSizes(seed: number, count: number): number[] {
  let s = seed;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    out.push(1 + (s % 9));
  }
  return out;
}

export function framingContract(framing: StreamFraming, opts: FramingContractOptions): void {
  describe(`framing contract: ${framing.name}`, () => {
    // A provider's framing is asked for by content type once it is registered; a built-in one already is.
    let unregister: (() => void) | undefined;
    beforeAll(() => {
      if (framingFor(opts.contentTypes[0]) !== framing) unregister = registerFraming(framing);
    });
    afterAll(() => unregister?.());

    it('is chosen for its content types, and not for others', () => {
      for (const type of opts.contentTypes) {
        expect(framing.accepts(type), type).toBe(true);
        expect(framingFor(type), type).toBe(framing);
      }
      for (const type of opts.notContentTypes) expect(framing.accepts(type), type).toBe(false);
    });

    for (const sample of opts.samples) {
      it(`${sample.name}: split into its events and written back, the same bytes`, () => {
        const { events, rest } = decodeIn(framing, sample.bytes, [sample.bytes.byteLength || 1]);
        expect(events).toHaveLength(sample.events);
        expect(rest).toBe('');
        expect(encodeAll(framing, events, rest).equals(toBuffer(sample.bytes))).toBe(true);
        // The caller stamps offsets: a decoder leaves them at 0.
        for (const ev of events) expect(ev.offsetMs).toBe(0);
      });

      it(`${sample.name}: the same events however the bytes are cut`, () => {
        const whole = decodeIn(framing, sample.bytes, [sample.bytes.byteLength || 1]);
        for (const sizes of [[1], [2], [3], [7], [64], randomSizes(7, 50), randomSizes(1234, 50)]) {
          const cut = decodeIn(framing, sample.bytes, sizes);
          expect(cut.events, `pieces of ${sizes.slice(0, 5).join(', ')}`).toEqual(whole.events);
          expect(cut.rest).toBe(whole.rest);
        }
      });

      it(`${sample.name}: its events survive a tape line`, () => {
        const { events } = decodeIn(framing, sample.bytes, [sample.bytes.byteLength || 1]);
        const read = events.map((ev) => SseEventSchema.parse(JSON.parse(JSON.stringify(ev))));
        expect(encodeAll(framing, read, '').equals(toBuffer(sample.bytes))).toBe(true);
      });

      it(`${sample.name}: cut inside its last event, the events before it and the partial one as the rest`, () => {
        const { events } = decodeIn(framing, sample.bytes, [sample.bytes.byteLength || 1]);
        const last = toBuffer(framing.encode(events.at(-1) as StreamEvent));
        if (last.byteLength < 2) return;
        const cutAt = sample.bytes.byteLength - Math.ceil(last.byteLength / 2);
        const cut = toBuffer(sample.bytes).subarray(0, cutAt);
        for (const sizes of [[cut.byteLength], [1], randomSizes(99, 40)]) {
          const got = decodeIn(framing, cut, sizes);
          expect(got.events).toEqual(events.slice(0, -1));
          expect(got.rest).not.toBe('');
          expect(encodeAll(framing, got.events, got.rest).equals(cut)).toBe(true);
        }
      });
    }

    it('two decoders fed in turn keep their streams apart', () => {
      const [a, b] = [opts.samples[0] as FramingSample, opts.samples[1] ?? (opts.samples[0] as FramingSample)];
      const one = framing.decoder();
      const two = framing.decoder();
      const gotA: StreamEvent[] = [];
      const gotB: StreamEvent[] = [];
      for (let at = 0; at < Math.max(a.bytes.byteLength, b.bytes.byteLength); at += 3) {
        gotA.push(...one.feed(a.bytes.subarray(at, at + 3)));
        gotB.push(...two.feed(b.bytes.subarray(at, at + 3)));
      }
      gotA.push(...one.end());
      gotB.push(...two.end());
      expect(gotA).toEqual(decodeIn(framing, a.bytes, [a.bytes.byteLength]).events);
      expect(gotB).toEqual(decodeIn(framing, b.bytes, [b.bytes.byteLength]).events);
    });

    it('a stream with no bytes has no events and no rest', () => {
      const decoder = framing.decoder();
      expect(decoder.end()).toEqual([]);
      expect(decoder.rest()).toBe('');
    });
  });
}
