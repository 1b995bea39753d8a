// The benchmark's AWS Bedrock Runtime: ConverseStream answered as AWS's binary event-stream (17 frames an answer:
// messageStart, 13 contentBlockDelta, contentBlockStop, messageStop, metadata), each frame its own write, as the SSE
// rows' upstream writes each event. It checks no signature (the upstream's SigV4 check is in the tests,
// test/helpers/bedrock-upstream.ts): the bench measures what tapedeck does, its signing included.
// Usage: node bench/bedrock-upstream.mjs [LATENCY_MS] [EVENT_GAP_MS]  -> prints "listening on URL"
import { createServer } from 'node:http';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';

const [latencyMs = 0, eventGapMs = 0] = process.argv.slice(2).map(Number);
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const frame = (type, payload) =>
  codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: Buffer.from(JSON.stringify(payload)),
  });

function frames(question) {
  const words = `The answer to ${question} is what you asked for, said in thirteen words here.`.split(/(?<= )/).slice(0, 13);
  return [
    frame('messageStart', { role: 'assistant' }),
    ...words.map((text) => frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text } })),
    frame('contentBlockStop', { contentBlockIndex: 0 }),
    frame('messageStop', { stopReason: 'end_turn' }),
    frame('metadata', { usage: { inputTokens: 20, outputTokens: 13, totalTokens: 33 }, metrics: { latencyMs: 1 } }),
  ];
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const answer = () => {
      if (!/^\/model\/[^/]+\/converse-stream$/.test(req.url ?? '')) return void res.writeHead(404).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const out = frames(body.messages?.[0]?.content?.[0]?.text ?? '');
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'bench' });
      if (eventGapMs === 0) {
        for (const f of out.slice(0, -1)) res.write(f);
        return void res.end(out[out.length - 1]);
      }
      let i = 0;
      const next = () => (i === out.length - 1 ? res.end(out[i]) : (res.write(out[i++]), setTimeout(next, eventGapMs)));
      next();
    };
    if (latencyMs > 0) setTimeout(answer, latencyMs);
    else answer();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
