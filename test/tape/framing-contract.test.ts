/**
 * SSE through the framing contract (`framing-contract.ts`): LLM-shaped streams with each of the line endings the
 * spec allows (`\n`, `\r\n`, `\r`, and mixed), comments, multi-line data, ids and retries, and characters of several
 * bytes. And the tests' made-up line framing (`lines-framing.ts`), as a provider's framing would run it.
 */
import { sseFraming } from '../../src/tape/framing/sse.js';
import { framingContract } from './framing-contract.js';
import { LINES_TYPE, linesFraming } from './lines-framing.js';

const openai = [
  'data: {"id":"c1","choices":[{"delta":{"content":"one"}}]}',
  'data: {"id":"c1","choices":[{"delta":{"content":" two"}}]}',
  'data: [DONE]',
];
const anthropic = [
  'event: message_start\ndata: {"type":"message_start"}',
  'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"Bom dia, ça va? 😀"}}',
  'event: message_stop\ndata: {"type":"message_stop"}',
];
const withEnding = (events: readonly string[], eol: string): Buffer =>
  Buffer.from(events.map((e) => e.replaceAll('\n', eol) + eol + eol).join(''));

framingContract(sseFraming, {
  contentTypes: ['text/event-stream', 'text/event-stream; charset=utf-8', 'Text/Event-Stream'],
  notContentTypes: ['application/json', 'application/x-ndjson', 'text/plain', 'application/vnd.amazon.eventstream'],
  samples: [
    { name: 'OpenAI chunks, \\n', bytes: withEnding(openai, '\n'), events: 3 },
    { name: 'Anthropic events, \\r\\n', bytes: withEnding(anthropic, '\r\n'), events: 3 },
    { name: 'Anthropic events, \\r alone', bytes: withEnding(anthropic, '\r'), events: 3 },
    {
      name: 'mixed endings, a comment, multi-line data, id and retry',
      bytes: Buffer.from(
        ': keep-alive\n\nid: 7\r\nretry: 3000\rdata: line one\ndata: line two\r\n\r\ndata:nospace\n\revent: e\rdata: x\r\r',
      ),
      events: 4,
    },
  ],
});

framingContract(linesFraming, {
  contentTypes: [LINES_TYPE, `${LINES_TYPE}; charset=utf-8`],
  notContentTypes: ['text/event-stream', 'application/json'],
  samples: [
    { name: 'three objects', bytes: Buffer.from('{"a":1}\n{"b":"ça 😀"}\n{"done":true}\n'), events: 3 },
    { name: 'one object', bytes: Buffer.from('{"only":1}\n'), events: 1 },
  ],
});
