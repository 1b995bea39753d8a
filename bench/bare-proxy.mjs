// The floor for any proxy written on Node: the least a pass-through can do with the same libraries as tapedeck
// (node:http in, undici out, streamed back chunk by chunk), and nothing else: no tape, no parsing, no matching.
// The benchmark runs it next to `tapedeck record` so the cost of recording can be told from the cost of proxying.
// Usage: node bench/bare-proxy.mjs UPSTREAM_URL PREFIX  -> prints "listening on URL"
import { createServer } from 'node:http';
import { Agent, request } from 'undici';

const [upstream, prefix = ''] = process.argv.slice(2);
const dispatcher = new Agent({ connections: 256 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length']);

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k)) headers[k] = v;
    try {
      const up = await request(upstream + req.url.slice(prefix.length), {
        method: req.method,
        headers,
        body: Buffer.concat(chunks),
        dispatcher,
      });
      const out = {};
      for (const [k, v] of Object.entries(up.headers)) if (!HOP.has(k) || k === 'content-length') out[k] = v;
      res.writeHead(up.statusCode, out);
      for await (const chunk of up.body) res.write(chunk);
      res.end();
    } catch {
      res.destroy();
    }
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
