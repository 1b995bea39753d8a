/**
 * What went wrong in a run, named so a person can act on it: calls an upstream refused or failed (a 429, a 500, a
 * connection that broke), calls replay blocked as side effects and calls it had no recording for (misses), each at its
 * step (as `tapedeck show` numbers it); and, apart from them, the faults a rule injected on purpose (never blamed on
 * the upstream). Used where a run is summed up in a line: the end of a wrapped run, an experiment's rows, the first
 * divergence.
 */
import { faultOf } from '../replay/outcome.js';
import { httpErrorText } from './answer-error.js';
import type { Exchange } from '../tape/schema.js';
import { isOAuthStep } from '../providers/oauth.js';
import { oneLine, shorten } from './format.js';
import { toSteps } from './steps.js';

export interface UpstreamFailure {
  step: number;
  /** `LLM gpt-4.1`, `MCP tools/call echo`, `HTTP POST /v1/charges`. */
  call: string;
  /** `HTTP 429 rate_limit_exceeded: Rate limit reached for gpt-4.1`, `ECONNRESET: socket hang up`. */
  what: string;
  /** Whether the answer came from the tape (a failure recorded earlier) rather than from the upstream now. */
  fromTape: boolean;
}

export interface BlockedCall {
  step: number;
  tool: string;
  reason: string;
}

export interface MissedCall {
  step: number;
  call: string;
  /** What was asked, in short: the last user message, the tool's arguments. */
  asked: string;
  /** Why the tape could not answer it (the matcher's explanation). */
  reason: string;
}

export interface InjectedFault {
  step: number;
  call: string;
  /** The rule, as the start line named it: `#1 openai call 2 -> 429`. */
  rule: string;
  /** What the client got: `HTTP 429`, `a reset connection`, `the answer cut after 2 event(s)`, `a delayed answer`. */
  what: string;
}

export function callLabel(ex: Exchange): string {
  if (ex.llm) return `LLM ${ex.llm.model ?? ex.llm.api}`;
  if (ex.mcp) return `MCP ${ex.mcp.method}${ex.mcp.toolName ? ` ${ex.mcp.toolName}` : ''}`;
  if (ex.transport === 'websocket') return `WebSocket ${ex.request.path}`;
  return `HTTP ${ex.request.method} ${ex.request.path}`;
}

/** How an upstream failed this exchange; undefined when it did not (or when replay itself refused it). */
export function upstreamFailureOf(ex: Exchange): string | undefined {
  if (ex.match?.kind === 'miss' || ex.match?.kind === 'blocked' || ex.match?.kind === 'mock') return undefined;
  // An OAuth challenge, a discovery document not found, a refusal of replay's authorization server: the flow's steps.
  if (isOAuthStep(ex)) return undefined;
  // An answer a fault rule made or disturbed failed because the rule said so: never the upstream's failure.
  if (faultOf(ex) !== undefined) return undefined;
  if (ex.error !== undefined && ex.error.code !== 'CLIENT_CLOSED' && ex.error.code !== 'SHUTDOWN')
    return `${ex.error.code}: ${shorten(ex.error.message, 120)}`;
  // An MCP server stream declined (405) is the protocol, not a failure.
  if (ex.mcp?.method === 'tapedeck/stream') return undefined;
  return httpErrorText(ex);
}

export function upstreamFailures(exchanges: readonly Exchange[]): UpstreamFailure[] {
  return toSteps(exchanges).flatMap((s) => {
    const what = upstreamFailureOf(s.exchange);
    if (what === undefined) return [];
    const kind = s.exchange.match?.kind;
    return [{ step: s.index, call: callLabel(s.exchange), what, fromTape: kind === 'exact' || kind === 'semantic' }];
  });
}

export function blockedCalls(exchanges: readonly Exchange[]): BlockedCall[] {
  return toSteps(exchanges).flatMap((s) =>
    s.exchange.match?.kind === 'blocked'
      ? [
          {
            step: s.index,
            tool: s.exchange.mcp?.toolName ?? callLabel(s.exchange),
            reason: s.exchange.match.reason ?? 'a side effect the tape has no recording of',
          },
        ]
      : [],
  );
}

/** The calls replay had no recording for, in timeline order. */
export function missedCalls(exchanges: readonly Exchange[]): MissedCall[] {
  return toSteps(exchanges).flatMap((s) =>
    s.exchange.match?.kind === 'miss'
      ? [
          {
            step: s.index,
            call: callLabel(s.exchange),
            asked: shorten(oneLine(s.args), 60),
            reason: s.exchange.match.reason ?? 'no recording matches it',
          },
        ]
      : [],
  );
}

/** What a fault did to the answer the client got, in a few words. */
function faultEffect(ex: Exchange): string {
  const code = ex.error?.code;
  if (code === 'FAULT_RESET') return 'a reset connection';
  if (code === 'FAULT_CUT') return `the answer ${ex.error?.message.replace(/ by fault rule .*$/, '') ?? 'cut'}`;
  if (ex.mcp?.error !== undefined) {
    const e = ex.mcp.error as { code?: unknown };
    return `JSON-RPC error${typeof e.code === 'number' ? ` ${e.code}` : ''}`;
  }
  if (ex.mcp?.isError === true) return 'a tool error';
  if (ex.websocket !== undefined) return 'the session closed';
  const status = ex.response?.status;
  if (ex.match?.kind === 'fault' && status !== undefined) return httpErrorText(ex, 80) ?? `HTTP ${status}`;
  return 'a delayed answer';
}

/** The calls a fault rule made up or disturbed, in timeline order. */
export function injectedFaults(exchanges: readonly Exchange[]): InjectedFault[] {
  return toSteps(exchanges).flatMap((s) => {
    const rule = faultOf(s.exchange);
    return rule === undefined ? [] : [{ step: s.index, call: callLabel(s.exchange), rule, what: faultEffect(s.exchange) }];
  });
}

/** `step 1, LLM gpt-4.1 "hello two": no recorded request has this exact key` (the first miss, in words). */
export function describeMiss(m: MissedCall): string {
  return `step ${m.step}, ${m.call}${m.asked === '' ? '' : ` "${m.asked}"`}: ${shorten(m.reason, 200)}`;
}

/** `HTTP 429 into LLM gpt-4.1 at step 1 (rule #1 openai call 2 -> 429)`. */
export function describeFault(f: InjectedFault): string {
  return `${f.what} for ${f.call} at step ${f.step} (rule ${f.rule})`;
}

/** One line on the faults a run's rules injected, or undefined when none did: injected by tapedeck, not the upstream. */
export function runFaults(exchanges: readonly Exchange[]): string | undefined {
  const faults = injectedFaults(exchanges);
  if (faults.length === 0) return undefined;
  const shown = faults.slice(0, 3).map(describeFault).join('; ');
  return `injected by tapedeck's fault rules, not by an upstream: ${shown}${faults.length > 3 ? `; and ${faults.length - 3} more` : ''}`;
}

/** `the upstream answered HTTP 429 rate_limit_exceeded: ... to LLM gpt-4.1 at step 3` (one failure, in words). */
export function describeFailure(f: UpstreamFailure): string {
  return `${f.fromTape ? 'the recorded answer (served from the tape) was' : 'the upstream answered'} ${f.what} to ${f.call} at step ${f.step}`;
}

/** One line on what went wrong in a run, or undefined when nothing did: the first upstream failure, and blocks. */
export function runTrouble(exchanges: readonly Exchange[]): string | undefined {
  const failures = upstreamFailures(exchanges);
  const blocked = blockedCalls(exchanges);
  const parts: string[] = [];
  if (failures.length > 0)
    parts.push(
      `${describeFailure(failures[0] as UpstreamFailure)}${failures.length > 1 ? ` (and ${failures.length - 1} more failed call(s))` : ''}`,
    );
  if (blocked.length > 0)
    parts.push(
      `${blocked.length} call(s) blocked as side effects: ${blocked
        .slice(0, 3)
        .map((b) => `${b.tool} at step ${b.step}`)
        .join(', ')}${blocked.length > 3 ? ', ...' : ''}`,
    );
  return parts.length === 0 ? undefined : parts.join('; ');
}
