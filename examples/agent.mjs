// The examples kit's agent: plain Node, the official `openai` SDK and the MCP SDK client, no framework. It lists the
// MCP server's tools, offers them to the model, runs each tool call the model makes over MCP, and prints the answer.
//
//   node examples/agent.mjs [--model M] [--stream] [QUESTION]
//
// Where it connects (tapedeck's wrapper mode sets the first two for it):
//   the model       OPENAI_BASE_URL, else the kit's LLM at http://127.0.0.1:8901/v1
//   the MCP server  MCP_URL; else TAPEDECK_URL + /kit/mcp; else the kit's MCP server at http://127.0.0.1:8902/mcp;
//                   or, over stdio, MCP_COMMAND (a command line, e.g. "node examples/mcp-server.mjs")
//
// The answer goes to stdout, each step to stderr. An API error (a 429 from the model) exits 1 with its message.
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';

const { values, positionals } = parseArgs({
  options: { model: { type: 'string', default: 'gpt-4o' }, stream: { type: 'boolean' } },
  allowPositionals: true,
});
const question = positionals.join(' ') || "What's the weather in Lisbon tomorrow? Email it to ana@example.com.";
const say = (line) => process.stderr.write(`agent: ${line}\n`);

const openai = new OpenAI({
  baseURL: process.env.OPENAI_BASE_URL ?? 'http://127.0.0.1:8901/v1',
  // The kit's LLM takes any key; in replay tapedeck does too (and never writes one to a tape).
  apiKey: process.env.OPENAI_API_KEY ?? 'sk-examples-kit-not-a-real-key',
});

function mcpTransport() {
  if (process.env.MCP_COMMAND) {
    const [command, ...args] = process.env.MCP_COMMAND.split(/\s+/).filter(Boolean);
    return new StdioClientTransport({ command, args, stderr: 'inherit' });
  }
  const url = process.env.MCP_URL ?? (process.env.TAPEDECK_URL ? `${process.env.TAPEDECK_URL}/kit/mcp` : 'http://127.0.0.1:8902/mcp');
  return new StreamableHTTPClientTransport(new URL(url));
}

/** One model call, streamed or not, as {content, tool_calls}. */
async function ask(messages, tools) {
  const request = { model: values.model, messages, tools, temperature: 0.2 };
  if (!values.stream) return (await openai.chat.completions.create(request)).choices[0].message;
  const stream = await openai.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
  const message = { role: 'assistant', content: '', tool_calls: [] };
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta ?? {};
    message.content += delta.content ?? '';
    for (const t of delta.tool_calls ?? []) {
      const call = (message.tool_calls[t.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      call.id ||= t.id ?? '';
      call.function.name += t.function?.name ?? '';
      call.function.arguments += t.function?.arguments ?? '';
    }
  }
  if (message.tool_calls.length === 0) delete message.tool_calls;
  return message;
}

const mcp = new Client({ name: 'examples-kit-agent', version: '1.0.0' });
try {
  await mcp.connect(mcpTransport());
  const { tools } = await mcp.listTools();
  const offered = tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.inputSchema },
  }));
  const messages = [
    { role: 'system', content: 'You are a helpful assistant. Use the tools when they help.' },
    { role: 'user', content: question },
  ];
  say(`${question} (model ${values.model}, ${tools.length} tools)`);
  for (let turn = 0; turn < 8; turn++) {
    const reply = await ask(messages, offered);
    messages.push(reply);
    if (!reply.tool_calls?.length) {
      process.stdout.write(`${reply.content}\n`);
      break;
    }
    for (const call of reply.tool_calls) {
      const args = JSON.parse(call.function.arguments || '{}');
      const result = await mcp.callTool({ name: call.function.name, arguments: args });
      const text = result.content.map((c) => c.text ?? '').join('\n');
      say(`${call.function.name}(${JSON.stringify(args)}) -> ${result.isError ? 'ERROR ' : ''}${text}`);
      messages.push({ role: 'tool', tool_call_id: call.id, content: result.isError ? `ERROR: ${text}` : text });
    }
  }
} catch (err) {
  say(err instanceof OpenAI.APIError ? `the model's API failed: ${err.message}` : (err.stack ?? String(err)));
  process.exitCode = 1;
} finally {
  await mcp.close();
}
