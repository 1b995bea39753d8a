/**
 * Scripted WebSocket upstreams for tests: a real `ws` server on 127.0.0.1, port 0, that answers like the OpenAI
 * Realtime API or Gemini Live from a script, and counts connections and messages.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface WsConnection {
  ws: WebSocket;
  req: IncomingMessage;
  send(json: unknown): void;
}

export interface WsScript {
  /** Called on connect (send what the server says unprompted). */
  open?(conn: WsConnection): void;
  /** Called for each client message: JSON when it parses, else the raw bytes. */
  message(conn: WsConnection, msg: unknown, raw: Buffer, binary: boolean): void;
  /** The subprotocol to choose among those offered. */
  protocol?(offered: Set<string>): string | false;
}

export interface WsUpstream {
  /** `http://127.0.0.1:PORT` (`https://` with TLS): what a route names (tapedeck connects with ws:// or wss://). */
  url: string;
  connections: number;
  /** Every client message received, as JSON when it parsed. */
  received: unknown[];
  /** Headers of each upgrade request. */
  upgrades: IncomingMessage['headers'][];
  /** Path and query of each upgrade request. */
  urls: string[];
  close(): Promise<void>;
}

/** `tls`: serve wss:// with this key and certificate on `host` (default 127.0.0.1). */
export async function startWsUpstream(
  script: WsScript,
  opts: { tls?: { key: string; cert: string }; host?: string } = {},
): Promise<WsUpstream> {
  const answer = (_req: IncomingMessage, res: ServerResponse): void => void res.writeHead(426).end('upgrade required');
  const server: Server = opts.tls ? createHttpsServer(opts.tls, answer) : createServer(answer);
  const wss = new WebSocketServer({ server, handleProtocols: (offered) => script.protocol?.(offered) ?? false });
  const state: WsUpstream = {
    url: '',
    connections: 0,
    received: [],
    upgrades: [],
    urls: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  wss.on('connection', (ws, req) => {
    state.connections++;
    state.upgrades.push(req.headers);
    state.urls.push(req.url ?? '');
    const conn: WsConnection = { ws, req, send: (json) => ws.send(JSON.stringify(json)) };
    ws.on('message', (data: Buffer, binary: boolean) => {
      let msg: unknown = data;
      if (!binary) {
        try {
          msg = JSON.parse(data.toString('utf8'));
        } catch {
          msg = data.toString('utf8');
        }
      }
      state.received.push(msg);
      script.message(conn, msg, data, binary);
    });
    script.open?.(conn);
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  state.url = `${opts.tls ? 'https' : 'http'}://${host}:${(server.address() as AddressInfo).port}`;
  return state;
}

type Json = Record<string, unknown>;

/**
 * An OpenAI Realtime server: `session.created` on connect; `session.update` -> `session.updated`;
 * `conversation.item.create` -> `conversation.item.created` (the item with an id); `response.create` -> a response
 * streamed as deltas then `response.done` with usage. The model asks for `get_weather` when the last user message
 * mentions the weather and no function output followed, and answers with the output once there is one.
 */
export function realtimeScript(): WsScript {
  let items = 0;
  let responses = 0;
  const conversation: Json[] = [];
  return {
    protocol: (offered) => (offered.has('realtime') ? 'realtime' : false),
    open(conn) {
      conn.send({
        type: 'session.created',
        event_id: 'event_srv_0',
        session: { id: 'sess_1', model: 'gpt-realtime', instructions: '', tools: [] },
      });
    },
    message(conn, msg) {
      const ev = msg as Json;
      const type = ev.type;
      if (type === 'session.update') {
        conn.send({
          type: 'session.updated',
          event_id: `event_srv_u${items}`,
          session: { id: 'sess_1', model: 'gpt-realtime', ...(ev.session as Json) },
        });
      } else if (type === 'conversation.item.create') {
        const item = { id: (ev.item as Json).id ?? `item_${++items}`, ...(ev.item as Json) };
        conversation.push(item);
        conn.send({ type: 'conversation.item.created', event_id: `event_srv_i${items}`, previous_item_id: null, item });
      } else if (type === 'response.create') {
        const id = `resp_${++responses}`;
        const last = conversation.at(-1) ?? {};
        const text = JSON.stringify(last);
        conn.send({ type: 'response.created', event_id: `event_srv_r${responses}`, response: { id, status: 'in_progress', output: [] } });
        if (last.type === 'message' && /weather/i.test(text)) {
          const call = {
            id: `item_fc_${responses}`,
            type: 'function_call',
            call_id: `call_${responses}`,
            name: 'get_weather',
            arguments: '{"city":"Paris"}',
          };
          conn.send({ type: 'response.output_item.added', response_id: id, output_index: 0, item: { ...call, arguments: '' } });
          conn.send({
            type: 'response.function_call_arguments.delta',
            response_id: id,
            item_id: call.id,
            call_id: call.call_id,
            delta: '{"city":',
          });
          conn.send({
            type: 'response.function_call_arguments.delta',
            response_id: id,
            item_id: call.id,
            call_id: call.call_id,
            delta: '"Paris"}',
          });
          conn.send({
            type: 'response.function_call_arguments.done',
            response_id: id,
            item_id: call.id,
            call_id: call.call_id,
            name: 'get_weather',
            arguments: call.arguments,
          });
          conn.send({ type: 'response.output_item.done', response_id: id, output_index: 0, item: call });
          conn.send({ type: 'response.done', response: { id, status: 'completed', output: [call], usage: usage(40, 12) } });
          conversation.push(call);
          return;
        }
        const answer =
          last.type === 'function_call_output'
            ? `It is ${String((JSON.parse(String(last.output)) as Json).sky)} in Paris.`
            : 'Hello from the realtime model.';
        const item = { id: `item_msg_${responses}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: answer }] };
        conn.send({ type: 'response.output_item.added', response_id: id, output_index: 0, item: { ...item, content: [] } });
        for (const part of answer.match(/.{1,8}/g) ?? [])
          conn.send({
            type: 'response.output_text.delta',
            response_id: id,
            item_id: item.id,
            output_index: 0,
            content_index: 0,
            delta: part,
          });
        conn.send({ type: 'response.output_text.done', response_id: id, item_id: item.id, text: answer });
        conn.send({ type: 'response.done', response: { id, status: 'completed', output: [item], usage: usage(60, 9) } });
        conversation.push(item);
      }
    },
  };
}

function usage(input: number, output: number): Json {
  return { total_tokens: input + output, input_tokens: input, output_tokens: output, input_token_details: { cached_tokens: 0 } };
}

/**
 * A Gemini Live server: `setup` -> `setupComplete`; a `clientContent` turn asking about the weather -> a `toolCall`;
 * a `toolResponse` or any other turn -> the answer in two `serverContent` parts, then `turnComplete` with
 * `usageMetadata`. Like the real API, it sends its JSON as binary messages.
 */
export function geminiLiveScript(): WsScript {
  let calls = 0;
  const send = (conn: WsConnection, json: unknown): void => conn.ws.send(Buffer.from(JSON.stringify(json)), { binary: true });
  return {
    message(conn, msg, raw, binary) {
      const m = (binary ? JSON.parse(raw.toString('utf8')) : msg) as Json;
      if (m.setup !== undefined) return send(conn, { setupComplete: {} });
      if (m.clientContent !== undefined && /weather/i.test(JSON.stringify(m.clientContent))) {
        calls++;
        return send(conn, {
          toolCall: { functionCalls: [{ id: `function-call-${calls}`, name: 'get_weather', args: { city: 'Paris' } }] },
        });
      }
      const answer = m.toolResponse !== undefined ? 'It is sunny in Paris.' : 'Hello from Gemini Live.';
      send(conn, { serverContent: { modelTurn: { parts: [{ text: answer.slice(0, 9) }] } } });
      send(conn, { serverContent: { modelTurn: { parts: [{ text: answer.slice(9) }] } } });
      send(conn, {
        serverContent: { turnComplete: true },
        usageMetadata: { promptTokenCount: 21, responseTokenCount: 7, totalTokenCount: 28 },
      });
    },
  };
}

/**
 * The OpenAI Responses API over WebSocket (`/v1/responses`): each `response.create` is answered with the events an
 * HTTP streamed Responses call carries, `response.created` ... `response.completed` (with usage), each with its
 * `sequence_number`. A user message about the weather, with `get_weather` offered, gets a function call; a
 * `function_call_output` gets "It is sunny in Paris."; any other question gets `Answer to "QUESTION".` A
 * `previous_response_id` the server never gave gets the API's `previous_response_not_found` error event.
 */
export function responsesWsScript(): WsScript {
  let responses = 0;
  const given = new Set<string>();
  return {
    message(conn, msg) {
      const ev = msg as Json;
      if (ev.type !== 'response.create') return;
      if (typeof ev.previous_response_id === 'string' && !given.has(ev.previous_response_id)) {
        conn.send({
          type: 'error',
          status: 400,
          error: {
            type: 'invalid_request_error',
            code: 'previous_response_not_found',
            message: `Previous response with id '${ev.previous_response_id}' not found.`,
            param: 'previous_response_id',
          },
        });
        return;
      }
      const id = `resp_${++responses}`;
      given.add(id);
      const model = String(ev.model);
      let seq = 0;
      const send = (json: Json): void => conn.send({ ...json, sequence_number: seq++ });
      const input = (Array.isArray(ev.input) ? ev.input : [{ role: 'user', content: ev.input }]) as Json[];
      const last = input.at(-1) ?? {};
      const offered = Array.isArray(ev.tools) && (ev.tools as Json[]).some((t) => t.name === 'get_weather');
      send({ type: 'response.created', response: { id, object: 'response', model, status: 'in_progress', output: [] } });
      if (last.type !== 'function_call_output' && offered && /weather/i.test(JSON.stringify(last))) {
        const call = {
          id: `fc_${responses}`,
          type: 'function_call',
          status: 'completed',
          call_id: `call_${responses}`,
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
        };
        send({ type: 'response.output_item.added', output_index: 0, item: { ...call, arguments: '', status: 'in_progress' } });
        send({ type: 'response.function_call_arguments.delta', item_id: call.id, output_index: 0, delta: '{"city":' });
        send({ type: 'response.function_call_arguments.delta', item_id: call.id, output_index: 0, delta: '"Paris"}' });
        send({ type: 'response.function_call_arguments.done', item_id: call.id, output_index: 0, arguments: call.arguments });
        send({ type: 'response.output_item.done', output_index: 0, item: call });
        send({
          type: 'response.completed',
          response: { id, object: 'response', model, status: 'completed', output: [call], usage: responsesUsage(40, 12) },
        });
        return;
      }
      const question = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
      const text = last.type === 'function_call_output' ? 'It is sunny in Paris.' : `Answer to ${JSON.stringify(question)}.`;
      const item = {
        id: `msg_${responses}`,
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text, annotations: [] }],
      };
      send({ type: 'response.output_item.added', output_index: 0, item: { ...item, content: [], status: 'in_progress' } });
      for (const delta of text.match(/.{1,8}/g) ?? [])
        send({ type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta });
      send({ type: 'response.output_text.done', item_id: item.id, output_index: 0, content_index: 0, text });
      send({ type: 'response.output_item.done', output_index: 0, item });
      send({
        type: 'response.completed',
        response: { id, object: 'response', model, status: 'completed', output: [item], usage: responsesUsage(30, 7) },
      });
    },
  };
}

function responsesUsage(input: number, output: number): Json {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}
