/** AWS event-stream frames: split from bytes as they come, kept as events, written back byte for byte. */
import { describe, expect, it } from 'vitest';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { decodeEventStreamFrame, encodeEventStreamFrame, EventStreamSplitter } from '../../src/tape/event-stream.js';
import { frame } from '../helpers/bedrock-upstream.js';

const ev = (type: string, payload: unknown): Uint8Array =>
  frame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);

describe('event-stream framing', () => {
  it('splits frames across any chunking and writes each back exactly (CRCs intact)', () => {
    const frames = [
      ev('messageStart', { role: 'assistant' }),
      ev('contentBlockDelta', { delta: { text: 'héllo' } }),
      ev('messageStop', { stopReason: 'end_turn' }),
    ];
    const all = Buffer.concat(frames);
    for (const size of [1, 7, 50, all.byteLength]) {
      const splitter = new EventStreamSplitter();
      const out = [];
      for (let i = 0; i < all.byteLength; i += size) out.push(...splitter.write(all.subarray(i, i + size)));
      expect(out.map((e) => e.event)).toEqual(['messageStart', 'contentBlockDelta', 'messageStop']);
      expect(out[1]!.data).toBe('{"delta":{"text":"héllo"}}');
      expect(out[1]!.headers).toEqual({
        ':event-type': 'contentBlockDelta',
        ':content-type': 'application/json',
        ':message-type': 'event',
      });
      expect(out.every((e) => e.raw === undefined)).toBe(true);
      expect(Buffer.concat(out.map(encodeEventStreamFrame)).equals(all)).toBe(true);
      expect(splitter.rest()).toBe('');
    }
  });

  it('names an exception frame by its exception type', () => {
    const e = decodeEventStreamFrame(
      frame(
        { ':exception-type': 'throttlingException', ':content-type': 'application/json', ':message-type': 'exception' },
        { message: 'slow down' },
      ),
    );
    expect(e.event).toBe('throttlingException');
  });

  it('keeps the bytes of a frame that could not be written back from its text (a typed header)', () => {
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const bytes = codec.encode({
      headers: { ':event-type': { type: 'string', value: 'x' }, n: { type: 'integer', value: 7 } },
      body: Buffer.from('{}'),
    });
    const e = decodeEventStreamFrame(bytes);
    expect(e.raw).toBe(Buffer.from(bytes).toString('base64'));
    expect(encodeEventStreamFrame(e).equals(Buffer.from(bytes))).toBe(true);
  });

  it('stops at damaged bytes and keeps them as the rest, losing nothing', () => {
    const good = ev('a', {});
    const bad = Buffer.from(ev('b', {}));
    bad.writeUInt8(bad.readUInt8(bad.byteLength - 1) ^ 0xff, bad.byteLength - 1); // the message CRC no longer holds
    const splitter = new EventStreamSplitter();
    expect(splitter.write(Buffer.concat([good, bad])).map((e) => e.event)).toEqual(['a']);
    expect(Buffer.from(splitter.rest(), 'base64').equals(bad)).toBe(true);
  });
});
