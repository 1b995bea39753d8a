/**
 * A scripted, OpenAI-compatible chat completions server for the demo and the benchmark: deterministic answers,
 * JSON or SSE, a `get_weather` tool call when asked about the weather. Loopback only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

interface ChatBody {
  model?: string;
  stream?: boolean;
  messages?: { role: string; content?: string | null }[];
}

export interface ScriptedLlm {
  url: string;
  /** Requests received so far. */
  readonly hits: number;
  close(): Promise<void>;
}

export async function startScriptedLlm(opts: { port?: number } = {}): Promise<ScriptedLlm> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits++;
      let body: ChatBody = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatBody;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'invalid JSON', type: 'invalid_request_error' } }));
        return;
      }
      const answer = script(body);
      const model = body.model ?? 'demo-model';
      const usage = { prompt_tokens: 10 + JSON.stringify(body.messages ?? []).length / 8, completion_tokens: 12, total_tokens: 0 };
      usage.prompt_tokens = Math.round(usage.prompt_tokens);
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
      const message = answer.tool
        ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: answer.tool.name, arguments: JSON.stringify(answer.tool.args) } }] }
        : { role: 'assistant', content: answer.text };
      const finish = answer.tool ? 'tool_calls' : 'stop';
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion', created: 1_700_000_000, model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (delta: unknown, finishReason: string | null = null): string =>
        `data: ${JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
      res.write(chunk({ role: 'assistant', content: '' }));
      for (const word of (answer.text ?? '').split(/(?<= )/)) res.write(chunk({ content: word }));
      res.write(chunk({}, finish));
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get hits() {
      return hits;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function script(body: ChatBody): { text?: string; tool?: { name: string; args: Record<string, unknown> } } {
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: `Pack an umbrella: it is ${JSON.parse(last.content ?? '{}').forecast ?? 'unclear'} in Lisbon today.` };
  const question = last?.content ?? '';
  if (/weather/i.test(question)) return { tool: { name: 'get_weather', args: { city: 'Lisbon' } } };
  return { text: `You asked: "${question}". The answer is 42.` };
}
