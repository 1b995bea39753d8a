/**
 * JSON-RPC batches (MCP 2025-03-26): a client may send several messages in one POST (or one stdio line), and the
 * server answers each request (a JSON array, or one SSE event per message). On the tape every message of a batch is
 * an exchange of its own, exactly as if it had been sent alone: its request body is the one message, its response
 * carries what the server sent for it. So matching, the side-effect policy, `show`, `side-effects init` and the
 * exports see a tool call in a batch like any other, and replay decides each message of an incoming batch the
 * same way it decides a single one. `notes.batch` says which batch a message came in (`{index, size}`).
 */
import { TapedeckError } from '../errors.js';
import type { SseEvent } from '../tape/schema.js';
import type { NewExchange } from '../tape/stores/tape-writer.js';
import { looksLikeRpc, progressToken, validateRpc, type JSONRPCMessage, type Message, type RequestId } from './mcp.js';
import { JsonTooDeepError, parseJson } from '../tape/json-depth.js';

/** The most messages one batch may carry (the MCP SDK server's own limit). */
export const MAX_BATCH_SIZE = 100;

/** The messages of a JSON-RPC batch body, or undefined when the body is not a batch. */
export function batchMessages(body: unknown): Message[] | undefined {
  return Array.isArray(body) && looksLikeRpc(body) ? (body as Message[]) : undefined;
}

/** A client's wire text as JSON-RPC: one message, or a batch of them (`batch`), or why it is neither. */
export type ParsedRpcBody = { ok: true; messages: JSONRPCMessage[]; batch: boolean } | { ok: false; error: TapedeckError };

/**
 * Parse what a client sent: one JSON-RPC message or a batch. A batch must hold 1 to {@link MAX_BATCH_SIZE} valid
 * messages (one invalid message refuses the whole batch, as the MCP SDK server does).
 */
export function parseRpcBody(text: string): ParsedRpcBody {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (err) {
    return { ok: false, error: unreadableRpc(err) };
  }
  return rpcMessages(value);
}

/** Why a client's wire text could not be read as JSON (`PARSE_ERROR`), from what parsing it threw. */
export function unreadableRpc(err: unknown): TapedeckError {
  const why = err instanceof JsonTooDeepError ? `is ${err.message}` : 'is not valid JSON';
  return new TapedeckError('PARSE_ERROR', `Parse error: the message ${why}`);
}

/** A parsed JSON value as JSON-RPC: one message, or a batch of them (`batch`), or why it is neither. */
export function rpcMessages(value: unknown): ParsedRpcBody {
  if (!Array.isArray(value)) {
    const one = validateRpc(value);
    return one.ok ? { ok: true, messages: [one.message], batch: false } : one;
  }
  if (value.length === 0 || value.length > MAX_BATCH_SIZE)
    return {
      ok: false,
      error: new TapedeckError('BAD_REQUEST', `Invalid Request: a batch holds 1 to ${MAX_BATCH_SIZE} messages (this one ${value.length})`),
    };
  const messages: JSONRPCMessage[] = [];
  for (const [i, item] of value.entries()) {
    const one = validateRpc(item);
    if (!one.ok) return { ok: false, error: new TapedeckError('BAD_REQUEST', `${one.error.message} (batch message ${i + 1})`) };
    messages.push(one.message);
  }
  return { ok: true, messages, batch: true };
}

/** A client message that expects an answer (a request: method and id). */
export function isRequestMessage(m: Message): boolean {
  return typeof m.method === 'string' && m.id !== undefined && m.id !== null;
}

const isResponse = (m: Message): boolean => m.method === undefined && m.id !== undefined;

interface Part {
  message: Message;
  request: boolean;
  events: SseEvent[];
  body?: Message;
  answered: boolean;
}

/**
 * One exchange per message when `ex` is a recorded JSON-RPC batch (the server's answers shared out by id,
 * notifications by progress token, else to the earliest request still unanswered); undefined for anything else.
 */
export function splitBatchExchange(ex: NewExchange): NewExchange[] | undefined {
  const messages = ex.request.body.kind === 'json' ? batchMessages(ex.request.body.json) : undefined;
  if (messages === undefined) return undefined;
  const parts: Part[] = messages.map((message) => ({ message, request: isRequestMessage(message), events: [], answered: false }));
  const requests = parts.filter((p) => p.request);
  const owner = (m: Message): Part | undefined => {
    if (isResponse(m)) {
      const p = requests.find((r) => !r.answered && r.message.id === m.id);
      if (p) p.answered = true;
      return p;
    }
    const token = (m.params as { progressToken?: RequestId } | undefined)?.progressToken;
    const byToken = token === undefined ? undefined : requests.find((r) => progressToken(r.message) === token);
    return byToken ?? requests.find((r) => !r.answered) ?? requests.at(-1);
  };
  const fallback = requests[0] ?? parts[0];

  for (const ev of ex.response?.events ?? []) {
    let data: unknown;
    try {
      data = ev.data === '' ? undefined : parseJson(ev.data);
    } catch {
      data = undefined;
    }
    if (Array.isArray(data) && looksLikeRpc(data)) {
      // Several answers in one event: one event each, so each exchange holds its own.
      for (const m of data as Message[]) {
        const p = owner(m) ?? fallback;
        p?.events.push({ offsetMs: ev.offsetMs, ...(ev.event !== undefined ? { event: ev.event } : {}), data: JSON.stringify(m) });
      }
      continue;
    }
    const p = looksLikeRpc(data) ? (owner(data as Message) ?? fallback) : fallback;
    p?.events.push(ev);
  }
  const body = ex.response?.body?.kind === 'json' ? ex.response.body.json : undefined;
  for (const m of Array.isArray(body) ? (body as unknown[]) : body === undefined ? [] : [body]) {
    if (!looksLikeRpc(m)) continue;
    const p = owner(m as Message);
    if (p) p.body = m as Message;
    // An answer with no request of its own (an error with id null): every request still without one gets it.
    else if (isResponse(m as Message)) for (const r of requests) if (!r.answered) r.body = m as Message;
  }
  // A body that is no JSON-RPC at all (an HTTP error page): each request keeps it as it was.
  const opaque = ex.response?.body !== undefined && body === undefined ? ex.response.body : undefined;

  return parts.map((p, index): NewExchange => {
    const { response: whole, error, ...rest } = ex;
    const out: NewExchange = {
      ...rest,
      request: { ...ex.request, body: { kind: 'json', json: p.message } },
      notes: { ...ex.notes, batch: { index, size: parts.length } },
    };
    if (whole !== undefined) {
      const response: NonNullable<NewExchange['response']> = { status: whole.status, headers: whole.headers };
      if (!p.request) {
        // A notification (or the client's answer to a server request) gets no answer of its own.
        response.status = whole.status >= 400 ? whole.status : 202;
        response.headers = {};
      } else if (whole.events !== undefined) {
        response.events = p.events;
        if (whole.tail !== undefined && p === fallback) response.tail = whole.tail;
      } else if (p.body !== undefined) response.body = { kind: 'json', json: p.body };
      else if (opaque !== undefined) response.body = opaque;
      else response.body = { kind: 'empty' };
      out.response = response;
    }
    if (error !== undefined && p.request) out.error = error;
    return out;
  });
}
