// The benchmark's upstream: the scripted OpenAI-compatible server from the demo, in its own process.
// Usage: node bench/upstream-server.mjs [LATENCY_MS] [EVENT_GAP_MS]  -> prints "listening on URL"
// With no arguments it answers at once (a zero-work upstream); with them, like a model: LATENCY_MS before the
// first byte, EVENT_GAP_MS between stream events.
import { startScriptedLlm } from '../dist/demo/scripted-llm.js';

const [latencyMs = 0, eventGapMs = 0] = process.argv.slice(2).map(Number);
const llm = await startScriptedLlm({ latencyMs, eventGapMs });
process.stdout.write(`listening on ${llm.url}\n`);
process.on('SIGTERM', () => void llm.close().then(() => process.exit(0)));
