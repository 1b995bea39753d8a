/**
 * The fault sink (`src/http/fault-sink.ts`) finds a stream's events through its framing: an SSE stream with any of
 * the spec's line endings is cut after N events, and a stream of another framing (one registered here, as a provider
 * would) is counted by its own events.
 */
import { describe, expect, it } from 'vitest';
import { faultSink } from '../../src/http/fault-sink.js';
import { BufferSink } from '../../src/http/sink.js';
import { registerFraming } from '../../src/tape/framing/registry.js';
import { LINES_TYPE, linesFraming } from '../tape/lines-framing.js';

/** The stream written through a fault sink that cuts after `n` events, in pieces of `size` bytes. */
async function cutAfter(n: number, contentType: string, wire: string, size = 5): Promise<{ got: string; events: number; cut: boolean }> {
  const into = new BufferSink();
  const sink = faultSink(into, { cut: { afterEvents: n } });
  sink.head(200, { 'content-type': contentType });
  const bytes = Buffer.from(wire);
  for (let at = 0; at < bytes.byteLength; at += size) sink.write(bytes.subarray(at, at + size));
  sink.end();
  await sink.finished;
  return { got: into.text(), events: sink.passed.events, cut: into.wasCut };
}

describe('the fault sink counts events by their framing', () => {
  for (const [name, eol] of [
    ['\\n', '\n'],
    ['\\r\\n', '\r\n'],
    ['\\r', '\r'],
  ] as const) {
    it(`cuts an SSE stream whose lines end in ${name} after two events`, async () => {
      const events = ['data: one', 'data: two', 'data: three', 'data: [DONE]'].map((e) => `${e}${eol}${eol}`);
      const { got, events: passed, cut } = await cutAfter(2, 'text/event-stream', events.join(''));
      expect(got).toBe(events[0]! + events[1]!);
      expect(passed).toBe(2);
      expect(cut).toBe(true);
    });
  }

  it('counts the events of a framing a provider registered (one JSON object a line)', async () => {
    const unregister = registerFraming(linesFraming);
    try {
      const { got, events, cut } = await cutAfter(1, LINES_TYPE, '{"a":1}\n{"a":2}\n{"a":3}\n', 3);
      expect(got).toBe('{"a":1}\n');
      expect(events).toBe(1);
      expect(cut).toBe(true);
    } finally {
      unregister();
    }
  });

  it('passes an answer that is not a stream whole (no framing claims it)', async () => {
    const { got, cut } = await cutAfter(1, 'application/json', '{"a":"\\n\\n"}\n\n{}');
    expect(got).toBe('{"a":"\\n\\n"}\n\n{}');
    expect(cut).toBe(false);
  });
});
