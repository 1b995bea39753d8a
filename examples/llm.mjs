// The examples kit's LLM: a scripted, OpenAI-compatible chat completions server (the one `npm run demo` uses,
// src/demo/scripted-llm.ts). JSON and streamed answers, tool calls with <rationale> blocks, answers that depend on
// the model (gpt-4.1 searches the user's notes first; a -mini model answers in fewer words) and a 429 on demand.
// On the same port, a scripted Realtime API over a WebSocket at /v1/realtime (examples/realtime.mjs).
//
//   node examples/llm.mjs [--port 8901] [--rate-limit MODEL]...
//
// A 429 on demand: a model whose name ends in -rate-limited (`--model gpt-4.1-rate-limited`), every model named
// with --rate-limit MODEL, and any request with the header `x-example-fail: 429` get 429 rate_limit_exceeded.
// Prints `listening on URL`; stops on Ctrl-C and when the shell that started it ends.
import { parseArgs } from 'node:util';
import { fromDist, stopWithParent } from './lib/lifetime.mjs';
import { realtimeUpgrade } from './realtime.mjs';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8901' },
    'rate-limit': { type: 'string', multiple: true, default: [] },
    'watch-pid': { type: 'string' },
  },
});
const { startScriptedLlm } = await fromDist('demo/scripted-llm.js');
const llm = await startScriptedLlm({ port: Number(values.port), rateLimit: values['rate-limit'], upgrade: realtimeUpgrade() }).catch(
  (err) => {
    const why = err.code === 'EADDRINUSE' ? `port ${values.port} is in use (--port N picks another)` : err.message;
    process.stderr.write(`examples/llm.mjs: ${why}\n`);
    process.exit(1);
  },
);
process.stdout.write(`listening on ${llm.url} (the examples kit's LLM, pid ${process.pid})\n`);
stopWithParent(() => llm.close(), Number(values['watch-pid'] ?? 0));
