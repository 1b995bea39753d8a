/**
 * Faults on the HTTP path (`--faults`): the call a rule picks gets an injected answer instead of its own (a status in
 * the provider's error shape, a reset), or its own answer with a fault on top (a slow first byte, slow events, a cut
 * after N events or bytes; `fault-sink.ts`). Every injected fault goes on the tape marked as such: `match.kind:
 * "fault"` for an answer tapedeck made up, and `notes.fault` (with `error` when the answer was cut) for one it only
 * disturbed.
 */
import type { ServerResponse } from 'node:http';
import { elapsedSince } from '../../engine/call.js';
import { faultStatusAnswer } from '../../engine/faults/fault-answers.js';
import type { FaultFacts, PickedFault } from '../../engine/faults/fault-plan.js';
import { exchangeRecord } from '../../engine/record.js';
import type { NewExchange } from '../../tape/store.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import type { FaultSink } from '../../http/fault-sink.js';
import { httpCall } from '../../http/http-call.js';
import { requestMeaning } from '../../http/request-meaning.js';
import { sendError } from '../../http/sink.js';
import type { ProxyRequest } from '../../http/types.js';

/** What a rule can match an HTTP call on (MCP tools and methods are matched per message, by the MCP server). */
export function httpFaultFacts(req: ProxyRequest): FaultFacts {
  const { api, llm } = requestMeaning(req);
  return { route: req.route.prefix, provider: api?.provider, api: api?.api, model: llm?.model };
}

/** Answer with an injected status or reset, and put it on the tape; false when the fault only disturbs the real answer. */
export function injectAnswer(req: ProxyRequest, res: ServerResponse, fault: PickedFault, out: ExchangeLog): boolean {
  const { then } = fault;
  const call = httpCall(req);
  const known = { known: { llm: requestMeaning(req).llm } };
  const match = { kind: 'fault' as const, reason: `injected by fault rule ${fault.description}` };
  if (then.status !== undefined) {
    const answer = faultStatusAnswer(then, requestMeaning(req).api);
    sendError(res, answer);
    const response = { status: answer.status, headers: answer.headers, body: { kind: 'json' as const, json: answer.body } };
    out.write(
      exchangeRecord(call, { response, timing: { durationMs: elapsedSince(call) } }, { match, notes: { fault: fault.description } }),
      known,
    );
    return true;
  }
  if (then.reset === true) {
    res.socket?.destroy();
    const error = { code: 'FAULT_RESET', message: `connection reset by fault rule ${fault.description}`, phase: 'connect' as const };
    out.write(
      exchangeRecord(call, { error, timing: { durationMs: elapsedSince(call) } }, { match, notes: { fault: fault.description } }),
      known,
    );
    return true;
  }
  return false;
}

/**
 * The tape a disturbed answer is written to: the exchange gets `notes.fault`, and when the rule cut it, the events the
 * client had and an error saying where it was cut. Writes wait for the answer to have gone through the fault sink.
 */
export function faultedLog(out: ExchangeLog, fault: PickedFault, sink: FaultSink): ExchangeLog {
  const annotate = (ex: NewExchange): NewExchange => {
    const notes = { ...ex.notes, fault: fault.description };
    if (!sink.passed.cut) return { ...ex, notes };
    const { events, bytes } = sink.passed;
    const response = ex.response?.events ? { ...ex.response, events: ex.response.events.slice(0, events) } : ex.response;
    const at = fault.then.cut?.afterEvents !== undefined ? `${events} event(s)` : `${bytes} byte(s)`;
    const error = { code: 'FAULT_CUT', message: `cut after ${at} by fault rule ${fault.description}`, phase: 'stream' as const };
    return { ...ex, ...(response ? { response } : {}), error, notes };
  };
  return {
    writer: out.writer,
    write: (ex, o) =>
      void out.writeWhen(
        sink.finished.then(() => annotate(ex)),
        o,
      ),
    // A live answer is committed before its end reaches the client: what the sink let through so far is what it lets through.
    commit: (ex, o) => out.commit(annotate(ex), o),
    writeWhen: (ex, o) =>
      out.writeWhen(
        Promise.all([ex, sink.finished]).then(([e]) => annotate(e)),
        o,
      ),
    track: out.track,
    drain: out.drain,
  };
}
