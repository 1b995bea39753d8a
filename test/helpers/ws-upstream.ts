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
