// The floor for any proxy written on Node: the least a pass-through can do with the same libraries as tapedeck
// (node:http in, undici out on its `dispatch` API, streamed back chunk by chunk), and nothing else: no tape, no
// parsing, no matching. The benchmark runs it next to `tapedeck record` so the cost of recording can be told from the
// cost of proxying. (It used `undici.request()` and a for-await over the body until tapedeck moved to `dispatch`:
// that floor cost ~45 us more per request; `BENCH_BARE=request` runs it that way.)
// Usage: node bench/bare-proxy.mjs UPSTREAM_URL PREFIX  -> prints "listening on URL"
import { createServer } from 'node:http';
import { Agent, request } from 'undici';

const [upstream, prefix = ''] = process.argv.slice(2);
const dispatcher = new Agent({ connections: 256 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length']);
const origin = new URL(upstream).origin;

function viaDispatch(req, res, headers, body) {
  dispatcher.dispatch(
    { origin, path: req.url.slice(prefix.length), method: req.method, headers, body },
    {
      onRequestStart() {},
      onResponseStart(_c, status, upHeaders) {
        const out = {};
        for (const [k, v] of Object.entries(upHeaders)) if (!HOP.has(k) || k === 'content-length') out[k] = v;
        res.writeHead(status, out);
      },
      onResponseData(c, chunk) {
        if (!res.write(chunk)) {
          c.pause();
          res.once('drain', () => c.resume());
        }
      },
      onResponseEnd() {
        res.end();
      },
      onResponseError() {
        res.destroy();
      },
    },
  );
}

async function viaRequest(req, res, headers, body) {
  try {
    const up = await request(upstream + req.url.slice(prefix.length), { method: req.method, headers, body, dispatcher });
    const out = {};
    for (const [k, v] of Object.entries(up.headers)) if (!HOP.has(k) || k === 'content-length') out[k] = v;
    res.writeHead(up.statusCode, out);
    for await (const chunk of up.body) res.write(chunk);
    res.end();
  } catch {
    res.destroy();
  }
}

const send = process.env.BENCH_BARE === 'request' ? viaRequest : viaDispatch;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k)) headers[k] = v;
    void send(req, res, headers, Buffer.concat(chunks));
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
