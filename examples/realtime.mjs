// The examples kit's Realtime API: a scripted OpenAI Realtime session over a WebSocket, served by the kit's LLM
// (examples/llm.mjs) on its own port at /v1/realtime, where the real API has it beside the chat completions. Text
// only, deterministic, like the LLM:
//
//   on connect                     session.created (the model from ?model=, default gpt-realtime)
//   session.update                 session.updated, with what the client set (instructions, tools)
//   conversation.item.create       conversation.item.added, then conversation.item.done (the item with its id)
//   response.create                a response: when the last item is the user asking about the weather and the session
//                                  offers get_forecast, a call of it (arguments streamed in two deltas); after a
//                                  function_call_output, the forecast as the answer (text in deltas); else a greeting.
//                                  Each ends with response.done and its usage.
//
// A client message it does not know gets the API's error event; the session goes on.
import { WebSocketServer } from 'ws';

const MODEL = 'gpt-realtime';

/** `server.on('upgrade', handler)`: the Realtime API at /v1/realtime; any other path is refused with a 404. */
export function realtimeUpgrade() {
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (offered) => (offered.has('realtime') ? 'realtime' : false) });
  return (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://kit');
    if (url.pathname !== '/v1/realtime') {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => session(ws, url.searchParams.get('model') ?? MODEL));
  };
}

/** One session: the conversation so far, and the answers the script gives it. */
function session(ws, model) {
  let events = 0;
  let items = 0;
  let responses = 0;
  const conversation = [];
  const config = {
    type: 'realtime',
    id: 'sess_kit_1',
    object: 'realtime.session',
    model,
    output_modalities: ['text'],
    instructions: '',
    tools: [],
  };
  const send = (event) => ws.send(JSON.stringify({ event_id: `event_kit_${++events}`, ...event }));

  send({ type: 'session.created', session: config });
  ws.on('message', (data, binary) => {
    let event;
    try {
      event = JSON.parse(data.toString('utf8'));
    } catch {
      event = undefined;
    }
    if (binary || typeof event?.type !== 'string') return send(error('invalid_request_error', 'expected a JSON event with a type'));
    if (event.type === 'session.update') {
      Object.assign(config, event.session ?? {});
      return send({ type: 'session.updated', session: config });
    }
    if (event.type === 'conversation.item.create') {
      const item = { id: event.item?.id ?? `item_kit_${++items}`, object: 'realtime.item', status: 'completed', ...event.item };
      conversation.push(item);
      send({ type: 'conversation.item.added', previous_item_id: event.previous_item_id ?? null, item });
      return send({ type: 'conversation.item.done', previous_item_id: event.previous_item_id ?? null, item });
    }
    if (event.type === 'response.create') return respond(`resp_kit_${++responses}`);
    send(error('invalid_request_error', `the kit's Realtime API does not know the event "${event.type}"`, event.event_id));
  });

  function respond(id) {
    const last = conversation.at(-1) ?? {};
    const asked = last.type === 'message' && last.role === 'user' ? textOf(last) : '';
    send({ type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress', output: [] } });
    if (/weather|forecast/i.test(asked) && config.tools.some((t) => t.name === 'get_forecast')) {
      const city = /\bin ([A-Z][\w-]+)/.exec(asked)?.[1] ?? 'Lisbon';
      const day = /tomorrow/i.test(asked) ? 'tomorrow' : 'today';
      const args = JSON.stringify({ city, day });
      const call = {
        id: `item_kit_fc_${responses}`,
        type: 'function_call',
        status: 'completed',
        name: 'get_forecast',
        call_id: `call_kit_${responses}`,
        arguments: args,
      };
      const at = { response_id: id, item_id: call.id, output_index: 0, call_id: call.call_id };
      send({
        type: 'response.output_item.added',
        response_id: id,
        output_index: 0,
        item: { ...call, status: 'in_progress', arguments: '' },
      });
      const half = Math.ceil(args.length / 2);
      send({ type: 'response.function_call_arguments.delta', ...at, delta: args.slice(0, half) });
      send({ type: 'response.function_call_arguments.delta', ...at, delta: args.slice(half) });
      send({ type: 'response.function_call_arguments.done', ...at, name: call.name, arguments: args });
      send({ type: 'response.output_item.done', response_id: id, output_index: 0, item: call });
      conversation.push(call);
      return send({
        type: 'response.done',
        response: { id, object: 'realtime.response', status: 'completed', output: [call], usage: usage(asked, args) },
      });
    }
    const forecast = last.type === 'function_call_output' ? String(last.output ?? '') : undefined;
    const city =
      forecast === undefined
        ? undefined
        : (JSON.parse(conversation.findLast((i) => i.type === 'function_call')?.arguments ?? '{}').city ?? 'Lisbon');
    const text = forecast === undefined ? "Hello from the kit's realtime model." : `Tomorrow in ${city}: ${forecast}.`;
    const item = {
      id: `item_kit_msg_${responses}`,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text }],
    };
    const at = { response_id: id, item_id: item.id, output_index: 0, content_index: 0 };
    send({ type: 'response.output_item.added', response_id: id, output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    for (const delta of text.match(/.{1,12}/gu) ?? []) send({ type: 'response.output_text.delta', ...at, delta });
    send({ type: 'response.output_text.done', ...at, text });
    send({ type: 'response.output_item.done', response_id: id, output_index: 0, item });
    conversation.push(item);
    send({
      type: 'response.done',
      response: { id, object: 'realtime.response', status: 'completed', output: [item], usage: usage(forecast ?? asked, text) },
    });
  }
}

function textOf(item) {
  return (item.content ?? []).map((c) => c.text ?? c.transcript ?? '').join(' ');
}

function error(type, message, eventId) {
  return { type: 'error', error: { type, code: null, message, param: null, event_id: eventId ?? null } };
}

/** Token counts that follow the text, about four characters a token, the same every run. */
function usage(input, output) {
  const inputTokens = 40 + Math.ceil(input.length / 4);
  const outputTokens = Math.ceil(output.length / 4);
  return {
    total_tokens: inputTokens + outputTokens,
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    input_token_details: { text_tokens: inputTokens, audio_tokens: 0, cached_tokens: 0 },
    output_token_details: { text_tokens: outputTokens, audio_tokens: 0 },
  };
}
