/**
 * A fault's answer in HTTP's framing (`--faults`): an injected status is the provider's own error (status, body and
 * headers, so an official SDK reads it and retries it, or not, as it would the real API's: the fault stage's
 * `fault-answers.ts`, re-exported by `engine/settle.ts`), a reset is the connection closed before any byte, an MCP rule's tool error (or JSON-RPC error)
 * the answer to the JSON-RPC request the POST carries. The settle picked the fault and marks the
 * record as injected (`match.kind: "fault"`); this only frames it.
 */
import { elapsedSince, type Call } from '../../engine/call.js';
import type { Injected } from '../../engine/decision.js';
import type { Answer } from '../../engine/record.js';
import { faultRpcAnswer, faultStatusAnswer } from '../../engine/settle.js';
import type { ResponderAnswer } from '../../http/types.js';
import type { Message } from '../../providers/mcp.js';
import type { ApiId } from '../../providers/types.js';

export type InjectedHttp = { reset: true; answer: Answer } | { reset: false; made: ResponderAnswer; answer: Answer };

/**
 * What a call of `api` gets for an injected fault, and the record the tape keeps of it. `message`: the JSON-RPC request
 * the call carries (an MCP rule's tool error or JSON-RPC error answers it, in the body of the POST's answer: the real
 * server never sees it).
 */
export function injectedAnswer(fault: Injected, api: ApiId | undefined, call: Call, message?: Message): InjectedHttp {
  if (fault.status === undefined && (fault.toolError !== undefined || fault.rpcError !== undefined) && message !== undefined) {
    const json = faultRpcAnswer(fault, message);
    const headers = { 'content-type': 'application/json' };
    return {
      reset: false,
      made: { status: 200, headers, json },
      answer: { response: { status: 200, headers, body: { kind: 'json', json } }, timing: { durationMs: elapsedSince(call) } },
    };
  }
  if (fault.status === undefined) {
    const error = { code: 'FAULT_RESET', message: `connection reset by fault rule ${fault.rule}`, phase: 'connect' as const };
    return { reset: true, answer: { error, timing: { durationMs: elapsedSince(call) } } };
  }
  const answer = faultStatusAnswer(fault, api);
  return {
    reset: false,
    made: { status: answer.status, headers: answer.headers, json: answer.body },
    answer: {
      response: { status: answer.status, headers: answer.headers, body: { kind: 'json', json: answer.body } },
      timing: { durationMs: elapsedSince(call) },
    },
  };
}
