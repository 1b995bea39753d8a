/**
 * The settle: the one function that acts on a call, whatever its transport and mode. It picks the call's fault (the
 * one place fault rules are asked, `faults/fault-plan.ts`), takes the decision (a fault that answers in the call's
 * place is the decision, and nothing else is asked), opens the call's tee (`tee.ts`: its record, committed before the
 * client gets the answer's end), and hands all three to the transport, which sends the answer in its framing with
 * the fault's disturbance on top (a slow or cut stream, a session closed after N messages).
 *
 * The tee records the answer with the fault's mark beside it: an answer a rule made up is `match.kind: "fault"`
 * (never served as the upstream's: `replay/servable.ts`), a disturbed one keeps how it was found with `notes.fault`
 * (a cut one what the client got: the events that went through and `FAULT_CUT`), so a run replayed with the same rules
 * gets the same answers.
 *
 * Record is a settle whose decision is always `live`; a transport that decides several calls before it answers any
 * (a JSON-RPC batch) takes `decideCall` for each, then delivers.
 */
import type { Call } from './call.js';
import { injectedMatch, replacesAnswer, type Decision, type Injected } from './decision.js';
import type { ExchangeLog } from './exchange-log.js';
import type { FaultFacts, FaultLevel, FaultPlan } from './faults/fault-plan.js';
import { createTee, type Tee, type TeeOptions } from './tee.js';
import type { TapeFailurePolicy } from './tape-failure.js';

// What a transport needs of the fault stage, from here rather than from `faults/` (the settle picks; a transport passes
// a `SettleContext` on and frames what was picked): the plan's type, what a rule matches a call on, a rule's answer in
// the provider's error shape or MCP's.
export type { FaultFacts, FaultLevel, FaultPlan, PickedFault } from './faults/fault-plan.js';
export { faultRpcAnswer, faultStatusAnswer } from './faults/fault-answers.js';
export type { Injected } from './decision.js';

/** What every settle of a session shares: the tape, the faults of the run, and what a failed tape does. */
export interface SettleContext {
  log: ExchangeLog;
  faults?: FaultPlan | undefined;
  onTapeFailure?: TapeFailurePolicy | undefined;
}

/** How a transport takes part in a settle. */
export interface SettlePort<D extends Decision> {
  /**
   * What fault rules can match this call on, and the levels of rules that act on it here; undefined: none. Asked
   * before the decision, or after it (given the decision) when the port's faults only disturb an answer (`faultAfter`).
   */
  faultFacts?(decision?: D): { facts: FaultFacts; levels: readonly FaultLevel[] } | undefined;
  /**
   * The fault is picked once the call is decided: for a transport whose rules only disturb an answer (a WebSocket
   * session closed after N messages), so a call with no answer to disturb (a refused session) is not counted.
   */
  faultAfter?: boolean;
  /** The decision a fault that answers in the call's place is, in this transport's terms (`from: "fault"`). */
  injected(fault: Injected): D;
  /** Decide the call: asked only when no fault answers in its place. */
  decide(): D | Promise<D>;
  /** The call as the tape records it once decided, and what its record's builder may take as known. */
  recorded(decision: D): { call: Call } & Pick<TeeOptions, 'known' | 'meaningOf'>;
}

/** A decided call: its decision, its tee, and the fault that disturbs its answer, if one does. */
export interface Decided<D extends Decision> {
  decision: D;
  call: Call;
  tee: Tee;
  disturb: Injected | undefined;
}

/** Pick the call's fault, decide it, and open its tee. */
export async function decideCall<D extends Decision>(port: SettlePort<D>, ctx: SettleContext): Promise<Decided<D>> {
  const decided: D | undefined = port.faultAfter === true ? await port.decide() : undefined;
  const fault = pickFault(port, ctx.faults, decided);
  const replaced = fault !== undefined && replacesAnswer(fault);
  const decision = replaced ? port.injected(fault) : (decided ?? (await port.decide()));
  const { call, known, meaningOf } = port.recorded(decision);
  const notes = fault === undefined ? decision.notes : { ...decision.notes, fault: fault.rule };
  const match = replaced ? injectedMatch(fault) : decision.match;
  const tee = createTee(ctx.log, call, { match, notes, known, meaningOf, onTapeFailure: ctx.onTapeFailure });
  return { decision, call, tee, disturb: replaced ? undefined : fault };
}

/** Decide a call and deliver its answer; resolves once the transport has delivered it (and its record is committed). */
export async function settle<D extends Decision>(
  port: SettlePort<D> & { deliver(decided: Decided<D>): Promise<void> },
  ctx: SettleContext,
): Promise<void> {
  await port.deliver(await decideCall(port, ctx));
}

/** The fault a rule picks for this call, as the transport is handed it. */
function pickFault<D extends Decision>(port: SettlePort<D>, faults: FaultPlan | undefined, decided: D | undefined): Injected | undefined {
  if (faults === undefined) return undefined;
  const asked = port.faultFacts?.(decided);
  if (asked === undefined) return undefined;
  const picked = faults.pick(asked.facts, asked.levels);
  return picked === undefined ? undefined : { rule: picked.description, ...picked.then };
}
