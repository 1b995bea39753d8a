/**
 * The providers' framings through the framing contract (`framing-contract.ts`): NDJSON (Ollama's streams) and AWS's
 * binary event-stream (Bedrock's), each split into events and written back byte for byte however the bytes are cut.
 * And what the event-stream framing keeps readable: a frame's name and its payload as text.
 */
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { awsEventStreamFraming, frameEvent } from '../../src/tape/framing/aws-eventstream.js';
import { ndjsonFraming } from '../../src/tape/framing/ndjson.js';
import { frame } from '../helpers/bedrock-upstream.js';
import { decodeIn, framingContract } from './framing-contract.js';

framingContract(ndjsonFraming, {
  contentTypes: ['application/x-ndjson', 'application/x-ndjson; charset=utf-8', 'application/jsonl'],
  notContentTypes: ['text/event-stream', 'application/json', 'application/vnd.amazon.eventstream'],
  samples: [
    {
      name: 'Ollama chat lines',
      bytes: Buffer.from(
        '{"message":{"content":"Bom"},"done":false}\n{"message":{"content":" dia 😀"},"done":false}\n{"done":true,"eval_count":2}\n',
      ),
      events: 3,
    },
    { name: 'CRLF endings and a blank line', bytes: Buffer.from('{"a":1}\r\n\n{"b":2}\r\n'), events: 2 },
  ],
});

const ev = (type: string, payload: unknown): Uint8Array =>
  frame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);
const converse = Buffer.concat([
  ev('messageStart', { role: 'assistant' }),
  ev('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Olá 😀' } }),
  ev('messageStop', { stopReason: 'end_turn' }),
]);
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const odd = Buffer.from(
  codec.encode({ headers: { n: { type: 'integer', value: 7 }, ':event-type': { type: 'string', value: 'x' } }, body: Buffer.from('{}') }),
);

framingContract(awsEventStreamFraming, {
  contentTypes: ['application/vnd.amazon.eventstream', 'Application/Vnd.Amazon.EventStream'],
  notContentTypes: ['text/event-stream', 'application/json', 'application/x-ndjson'],
  samples: [
    { name: 'ConverseStream frames', bytes: converse, events: 3 },
    {
      name: 'a frame with a typed header, and an exception',
      bytes: Buffer.concat([
        odd,
        frame(
          { ':exception-type': 'throttlingException', ':content-type': 'application/json', ':message-type': 'exception' },
          { message: 'slow down' },
        ),
      ]),
      events: 2,
    },
  ],
});

/** The prelude (12 bytes) and the first header's name-length byte. */
const PRELUDE_AND_NAME_LENGTH = 13;

const isExceptionName = (name: string): boolean => name.endsWith('Exception');

describe('event-stream frames on the tape', () => {
  it('are named by their event or exception type, their payload as text, with no bytes kept when AWS headers give them back', () => {
    const { events } = decodeIn(awsEventStreamFraming, converse, [converse.byteLength]);
    expect(events[1]).toEqual({ offsetMs: 0, event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"Olá 😀"}}' });
    const exception = frameEvent(
      Buffer.from(
        frame(
          { ':exception-type': 'modelStreamErrorException', ':content-type': 'application/json', ':message-type': 'exception' },
          { message: 'boom' },
        ),
      ),
    );
    expect(exception).toEqual({ offsetMs: 0, event: 'modelStreamErrorException', data: '{"message":"boom"}' });
    expect(frameEvent(odd).raw).toBe(odd.toString('base64'));
  });

  it('rebuilds a frame as the AWS codec writes it: events, exceptions, any name, an empty or a large payload', () => {
    for (const name of ['messageStart', 'throttlingException', 'évent 😀'])
      for (const data of ['', '{"a":1}', `"${'ç'.repeat(70_000)}"`]) {
        const headers = frame(
          isExceptionName(name)
            ? { ':exception-type': name, ':content-type': 'application/json', ':message-type': 'exception' }
            : { ':event-type': name, ':content-type': 'application/json', ':message-type': 'event' },
          data,
        );
        expect(
          Buffer.from(awsEventStreamFraming.encode({ offsetMs: 0, event: name, data })).equals(headers),
          `${name} ${data.length}`,
        ).toBe(true);
        expect(frameEvent(Buffer.from(headers))).toEqual({ offsetMs: 0, event: name, data });
      }
  });

  it('keeps the exact bytes of a frame its name and payload would not give back: another order, a payload or a name not UTF-8', () => {
    const reordered = Buffer.from(frame({ ':content-type': 'application/json', ':event-type': 'a', ':message-type': 'event' }, {}));
    const binary = Buffer.from(
      codec.encode({
        headers: {
          ':event-type': { type: 'string', value: 'chunk' },
          ':content-type': { type: 'string', value: 'application/json' },
          ':message-type': { type: 'string', value: 'event' },
        },
        body: Buffer.from([0xff, 0xfe, 0x00, 0x80]),
      }),
    );
    // A name whose bytes are not UTF-8: decoded, it would be written back as U+FFFD's bytes.
    const badName = Buffer.from(frame({ ':event-type': 'ab', ':content-type': 'application/json', ':message-type': 'event' }, {}));
    const at = badName.indexOf(Buffer.from('ab'));
    badName.writeUInt8(0xc3, at);
    badName.writeUInt32BE(crc32(badName.subarray(0, badName.byteLength - 4)), badName.byteLength - 4);
    for (const bytes of [reordered, binary, badName]) {
      const event = frameEvent(bytes);
      expect(event.raw).toBe(bytes.toString('base64'));
      expect(Buffer.from(awsEventStreamFraming.encode(event)).equals(bytes)).toBe(true);
    }
    expect(frameEvent(reordered)).toMatchObject({ event: 'a', data: '{}' });
  });

  it('stops at a damaged prelude or a header past its end, as at a damaged message', () => {
    const prelude = Buffer.from(ev('b', {}));
    prelude.writeUInt32BE((prelude.readUInt32BE(8) ^ 1) >>> 0, 8);
    const header = Buffer.from(ev('b', {}));
    header.writeUInt16BE(0xfff0, PRELUDE_AND_NAME_LENGTH + ':event-type'.length + 1);
    header.writeUInt32BE(crc32(header.subarray(0, header.byteLength - 4)), header.byteLength - 4);
    for (const bad of [prelude, header]) {
      const { events, rest } = decodeIn(awsEventStreamFraming, Buffer.concat([ev('a', {}), bad]), [7]);
      expect(events.map((e) => e.event)).toEqual(['a']);
      expect(Buffer.from(rest, 'base64').equals(bad)).toBe(true);
    }
  });

  it('stops at damaged bytes and keeps them as the rest, losing nothing', () => {
    const bad = Buffer.from(ev('b', {}));
    bad.writeUInt8(bad.readUInt8(bad.byteLength - 1) ^ 0xff, bad.byteLength - 1);
    const { events, rest } = decodeIn(awsEventStreamFraming, Buffer.concat([ev('a', {}), bad]), [5]);
    expect(events.map((e) => e.event)).toEqual(['a']);
    expect(Buffer.from(rest, 'base64').equals(bad)).toBe(true);
  });
});
