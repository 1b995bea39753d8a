// The examples kit's Realtime agent: a session with the model over a WebSocket, as a speech agent has, on the official
// `openai` SDK's `OpenAIRealtimeWS`, and the MCP SDK client for its tools. It lists the MCP server's tools, offers them
// to the model in `session.update`, asks its question, runs each function call the model makes over MCP, sends the
// output back, and prints the answer.
//
//   npx tapedeck record --tape NAME --config examples/tapedeck.yaml -- node examples/realtime-agent.mjs [--model M] [QUESTION]
//
// Run it under tapedeck (wrapper mode): the SDK always opens `wss://`, which tapedeck's port serves with its local CA
// (wrapper mode sets OPENAI_BASE_URL, TAPEDECK_URL and NODE_EXTRA_CA_CERTS), while the kit's LLM serves its Realtime
// API over plain `ws://`. The MCP server: MCP_URL, else TAPEDECK_URL + /kit/mcp.
//
// The answer goes to stdout, each step to stderr. An error event from the API, or a session that closes before the
// answer, exits 1.
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';

const { values, positionals } = parseArgs({ options: { model: { type: 'string', default: 'gpt-realtime' } }, allowPositionals: true });
const question = positionals.join(' ') || "What's the weather in Lisbon tomorrow?";
const say = (line) => process.stderr.write(`agent: ${line}\n`);

if (!process.env.TAPEDECK_URL) {
  say('run me under tapedeck: npx tapedeck record --tape NAME --config examples/tapedeck.yaml -- node examples/realtime-agent.mjs');
  say("(the SDK opens wss://, which tapedeck serves with its local CA; the kit's LLM speaks plain ws://)");
  process.exit(2);
}

const mcp = new Client({ name: 'examples-kit-realtime-agent', version: '1.0.0' });
await mcp.connect(new StreamableHTTPClientTransport(new URL(process.env.MCP_URL ?? `${process.env.TAPEDECK_URL}/kit/mcp`)));
const { tools } = await mcp.listTools();

// The kit's LLM takes any key; in replay tapedeck does too (and never writes one to a tape).
const rt = new OpenAIRealtimeWS(
  { model: values.model },
  new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'sk-examples-kit-not-a-real-key' }),
);
let answered = false;

rt.on('error', (err) => {
  say(`the Realtime API failed: ${err.message.split('\n')[0]}`);
  process.exitCode = 1;
  rt.close();
});

rt.on('session.created', () => {
  say(`${question} (model ${values.model}, ${tools.length} tools, a Realtime session)`);
  rt.send({
    type: 'session.update',
    session: {
      type: 'realtime',
      output_modalities: ['text'],
      instructions: 'You are a helpful assistant. Use the tools when they help.',
      tools: tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.inputSchema })),
    },
  });
  rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: question }] } });
  rt.send({ type: 'response.create' });
});

rt.on('response.done', async (event) => {
  const calls = event.response.output.filter((item) => item.type === 'function_call');
  for (const call of calls) {
    const args = JSON.parse(call.arguments || '{}');
    const result = await mcp.callTool({ name: call.name, arguments: args });
    const text = result.content.map((c) => c.text ?? '').join('\n');
    say(`${call.name}(${JSON.stringify(args)}) -> ${result.isError ? 'ERROR ' : ''}${text}`);
    rt.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: call.call_id, output: text } });
  }
  if (calls.length > 0) return rt.send({ type: 'response.create' });
  const message = event.response.output.find((item) => item.type === 'message');
  process.stdout.write(`${(message?.content ?? []).map((c) => c.text ?? c.transcript ?? '').join('')}\n`);
  answered = true;
  rt.close({ code: 1000, reason: 'done' });
});

rt.socket.on('close', async () => {
  if (!answered && process.exitCode === undefined) {
    say('the session closed before the model answered');
    process.exitCode = 1;
  }
  await mcp.close();
});
