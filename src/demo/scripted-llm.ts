/**
 * A scripted, OpenAI-compatible chat completions server: the demo's, the examples kit's (`examples/llm.mjs`) and
 * the benchmark's upstream. Deterministic answers (see `llm-script.ts`: tool calls, `<rationale>` blocks, answers
 * that depend on the model), as JSON or as a stream (`stream: true`, tool calls included, usage with
 * `stream_options.include_usage`), and a 429 on demand: for a model whose name ends in `-rate-limited`, for the
 * models named in `rateLimit`, or for any request carrying `x-example-fail: STATUS`. `GET /` says what it is (and
 * its pid). Loopback only. WebSocket upgrades go to the `upgrade` handler when one is given (the examples kit's
 * scripted Realtime API, on the same port as the chat completions, as the real API has them), else are refused.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { scriptedTurn, type ChatRequest, type ScriptedTurn } from './llm-script.js';

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
  /** Models whose every request is answered `429 rate_limit_exceeded` (an A/B run with one failing). */
  rateLimit?: readonly string[];
  /** Takes the WebSocket upgrades (`server.on('upgrade')`): the examples kit's Realtime API (examples/realtime.mjs). */
  upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

const CREATED = 1_700_000_000;

export async function startScriptedLlm(opts: ScriptedLlmOptions = {}): Promise<ScriptedLlm> {
  let hits = 0;
  const latencyMs = opts.latencyMs ?? 0;
  const eventGapMs = opts.eventGapMs ?? 0;
  const limited = new Set(opts.rateLimit ?? []);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => (latencyMs > 0 ? setTimeout(answer, latencyMs) : answer()));
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    const answer = (): void => {
      hits++;
      if (req.method === 'GET' && req.url === '/') {
        json(200, { name: 'tapedeck scripted LLM', pid: process.pid, endpoint: '/v1/chat/completions' });
        return;
      }
      if (req.method !== 'POST' || !/\/chat\/completions$/.test(new URL(req.url ?? '/', 'http://x').pathname)) {
        json(404, { error: { message: `no such endpoint: ${req.method} ${req.url}`, type: 'invalid_request_error', code: 'not_found' } });
        return;
      }
      let body: ChatRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
      } catch {
        json(400, { error: { message: 'invalid JSON', type: 'invalid_request_error' } });
        return;
      }
      const model = body.model ?? 'demo-model';
      const fail = req.headers['x-example-fail'];
      const status =
        typeof fail === 'string' && /^[45]\d\d$/.test(fail)
          ? Number(fail)
          : limited.has(model) || model.endsWith('-rate-limited')
            ? 429
            : 0;
      if (status !== 0) {
        // What a rate-limited API says; `x-should-retry: false` keeps the official SDKs from retrying it.
        json(
          status,
          {
            error: {
              message: `Rate limit reached for ${model} (scripted: this model is rate limited)`,
              type: status === 429 ? 'requests' : 'server_error',
              code: status === 429 ? 'rate_limit_exceeded' : 'scripted_failure',
            },
          },
          { 'retry-after': '1', 'x-should-retry': 'false' },
        );
        return;
      }
      const turn = scriptedTurn(body);
      if (!body.stream) {
        json(200, completion(turn, model));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const events = streamEvents(turn, model, body.stream_options?.include_usage === true);
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
  if (opts.upgrade) server.on('upgrade', opts.upgrade);
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

function completion(turn: ScriptedTurn, model: string): unknown {
  const calls = turn.toolCalls.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.arguments) },
  }));
  return {
    id: 'chatcmpl-demo',
    object: 'chat.completion',
    created: CREATED,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: turn.text, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: turn.usage,
  };
}

/** The turn as chat completion chunks: text word by word, each tool call's arguments in two fragments, [DONE]. */
function streamEvents(turn: ScriptedTurn, model: string, includeUsage: boolean): string[] {
  const chunk = (delta: unknown, finish: string | null = null): string =>
    `data: ${JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion.chunk', created: CREATED, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '' })];
  for (const word of (turn.text ?? '').split(/(?<= )/)) if (word !== '') events.push(chunk({ content: word }));
  turn.toolCalls.forEach((c, index) => {
    const args = JSON.stringify(c.arguments);
    const half = Math.ceil(args.length / 2);
    events.push(
      chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: args.slice(0, half) } }] }),
      chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }),
    );
  });
  events.push(chunk({}, turn.toolCalls.length > 0 ? 'tool_calls' : 'stop'));
  if (includeUsage)
    events.push(
      `data: ${JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion.chunk', created: CREATED, model, choices: [], usage: turn.usage })}\n\n`,
    );
  events.push('data: [DONE]\n\n');
  return events;
}
