/**
 * A real agent run for the viewer and export tests, recorded through the real CLI: the OpenAI SDK against a
 * scripted LLM upstream and the MCP SDK client against the real `@modelcontextprotocol/server-everything`
 * (tape `run`); then a modified replay of it with `--llm live --model gpt-4.1` (tape `run-live`), where the other
 * model asks for a different tool call, so the two runs part at a known step.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { spawnCli, waitForListening } from '../helpers/cli.js';
import { openaiChat, openaiChatStream, startScriptedUpstream } from '../helpers/scripted-upstream.js';
import { startEverything } from '../helpers/everything-server.js';

export const SYSTEM = 'You are a careful assistant.';
export const ASK = 'Echo a greeting';

async function serve(dir: string, args: string[]): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawnCli([...args, '--dir', dir, '--port', '0']);
  const url = await waitForListening(child);
  return { url, stop: () => new Promise((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM'))) };
}

/** The agent: ask the model (streamed), run the tool it picks over MCP, give the model the result, return its answer. */
export async function runAgent(url: string): Promise<string | null> {
  const openai = new OpenAI({ apiKey: 'sk-test-secret', baseURL: `${url}/openai/v1`, maxRetries: 0 });
  const client = new Client({ name: 'agent', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp/everything`)));
  try {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: ASK },
    ];
    const first = await openai.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0.2, messages });
    const call = first.choices[0]!.message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('expected a function call');
    const result = await client.callTool({
      name: call.function.name,
      arguments: JSON.parse(call.function.arguments) as Record<string, unknown>,
    });
    const tool = (result.content as { text: string }[])[0]!.text;
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: tool });
    const stream = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      temperature: 0.2,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let answer = '';
    for await (const chunk of stream) answer += chunk.choices[0]?.delta?.content ?? '';
    return answer;
  } finally {
    await client.close();
  }
}

/** Record `run` and its modified replay `run-live` into `dir`. */
export async function recordRunAndModifiedReplay(dir: string): Promise<void> {
  const llm = await startScriptedUpstream((req) => {
    const body = req.body as { model: string; stream?: boolean; messages: { role: string; content: string }[] };
    const other = body.model !== 'gpt-4o-mini';
    const tool = body.messages.find((m) => m.role === 'tool');
    if (tool) {
      const text = `${other ? 'Other' : 'Mini'} says: ${tool.content}`;
      const usage: [number, number] = other ? [80, 20] : [30, 6];
      if (body.stream) return openaiChatStream({ model: body.model, parts: text.split(/(?= )/), usage });
      return openaiChat({ model: body.model, content: text, usage });
    }
    return openaiChat({
      model: body.model,
      content: null,
      toolCalls: [{ id: 'call_1', name: 'echo', arguments: JSON.stringify({ message: other ? 'hello from the other model' : 'hello' }) }],
      usage: other ? [40, 9] : [12, 4],
    });
  });
  const mcp = await startEverything('streamableHttp');
  try {
    const rec = await serve(dir, ['record', '--tape', 'run', '--route', `/openai=${llm.url}`, '--route', `/mcp/everything=${mcp.url}/mcp`]);
    try {
      await runAgent(rec.url);
    } finally {
      await rec.stop();
    }
    await mcp.stop(); // tool calls come from the tape from here on
    const rep = await serve(dir, ['replay', '--tape', 'run', '--save-as', 'run-live', '--llm', 'live', '--model', 'gpt-4.1']);
    try {
      await runAgent(rep.url);
    } finally {
      await rep.stop();
    }
  } finally {
    await mcp.stop();
    await llm.close();
  }
}
