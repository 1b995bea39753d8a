// The benchmark's upstream: the scripted OpenAI-compatible server from the demo, in its own process.
// Usage: node bench/upstream-server.mjs  -> prints "listening on URL"
import { startScriptedLlm } from '../dist/demo/scripted-llm.js';

const llm = await startScriptedLlm();
process.stdout.write(`listening on ${llm.url}\n`);
process.on('SIGTERM', () => void llm.close().then(() => process.exit(0)));
