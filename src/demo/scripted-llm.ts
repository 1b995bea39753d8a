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

export interface ScriptedLlmOptions {
  port?: number;
  /** Wait this long before answering, like a model's time to first token (benchmarks). Default 0. */
  latencyMs?: number;
  /** Wait this long between stream events, like a model's time per token (benchmarks). Default 0. */
  eventGapMs?: number;
}

export async function startScriptedLlm(opts: ScriptedLlmOptions = {}): Promise<ScriptedLlm> {
  let hits = 0;
  const latencyMs = opts.latencyMs ?? 0;
  const eventGapMs = opts.eventGapMs ?? 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => (latencyMs > 0 ? setTimeout(answer, latencyMs) : answer()));
    const answer = (): void => {
      hits++;
      let body: ChatBody = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatBody;
      } catch {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'invalid JSON', type: 'invalid_request_error' } }));
        return;
      }
      const reply = script(body);
      const model = body.model ?? 'demo-model';
      const usage = { prompt_tokens: 10 + JSON.stringify(body.messages ?? []).length / 8, completion_tokens: 12, total_tokens: 0 };
      usage.prompt_tokens = Math.round(usage.prompt_tokens);
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
      const message = reply.tool
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_weather_1', type: 'function', function: { name: reply.tool.name, arguments: JSON.stringify(reply.tool.args) } },
            ],
          }
        : { role: 'assistant', content: reply.text };
      const finish = reply.tool ? 'tool_calls' : 'stop';
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-demo',
            object: 'chat.completion',
            created: 1_700_000_000,
            model,
            choices: [{ index: 0, message, finish_reason: finish }],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (delta: unknown, finishReason: string | null = null): string =>
        `data: ${JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
      const events = [
        chunk({ role: 'assistant', content: '' }),
        ...(reply.text ?? '').split(/(?<= )/).map((word) => chunk({ content: word })),
        chunk({}, finish),
        `data: ${JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage })}\n\n`,
        'data: [DONE]\n\n',
      ];
      if (eventGapMs <= 0) {
        for (const ev of events.slice(0, -1)) res.write(ev);
        res.end(events.at(-1));
        return;
      }
      let next = 0;
      const send = (): void => {
        if (res.destroyed) return;
        const last = next === events.length - 1;
        if (last) res.end(events[next]);
        else res.write(events[next++], () => setTimeout(send, eventGapMs));
      };
      send();
    };
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
  if (last?.role === 'tool')
    return { text: `Pack an umbrella: it is ${JSON.parse(last.content ?? '{}').forecast ?? 'unclear'} in Lisbon today.` };
  const question = last?.content ?? '';
  if (/weather/i.test(question)) return { tool: { name: 'get_weather', args: { city: 'Lisbon' } } };
  return { text: `You asked: "${question}". The answer is 42.` };
}
