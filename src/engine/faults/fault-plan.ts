/**
 * Which call gets which fault, over one run: each rule counts the calls its `when` matches and hits the Nth (`call`),
 * each one with a probability (a seeded generator, so `--seed` repeats a run), or every one, up to `times`. A rule
 * with `call` hits that call once by default, so a client that retries it (the same request again) gets the recorded
 * answer: "429 once, then the tape", as agents expect of a real rate limit. The first rule that hits wins.
 */
import type { FaultRule, FaultThen } from './fault-rules.js';
import { describeRule } from './fault-rules.js';

/** What is known of a call when its fault is picked: its route and, when it is one, its LLM API or MCP method. */
export interface FaultFacts {
  route: string;
  /** The LLM call's provider and API family. */
  provider?: string | undefined;
  api?: string | undefined;
  model?: string | undefined;
  /** MCP: the method, and the tool a `tools/call` names. */
  method?: string | undefined;
  tool?: string | undefined;
}

export interface PickedFault {
  then: FaultThen;
  /** Which rule (0-based) and what it says, for the replay tape. */
  rule: number;
  description: string;
}

/**
 * Where a rule acts: on an HTTP answer (a status, a reset, a cut, a delay), on an MCP message's answer (a tool error,
 * a JSON-RPC error), or on a WebSocket session (a close). Each place asks only for the rules that act there, so an
 * MCP POST is not counted twice, once as HTTP and once as a message.
 */
export type FaultLevel = 'http' | 'mcp' | 'websocket';

export function levelOf(then: FaultThen): FaultLevel {
  if (then.toolError !== undefined || then.rpcError !== undefined) return 'mcp';
  if (then.close !== undefined) return 'websocket';
  return 'http';
}

export interface FaultPlan {
  /**
   * The fault this call gets from the rules of these levels, if any (counting it against every rule of those levels it
   * matches; the first rule that hits, in the rules' order, wins).
   */
  pick(facts: FaultFacts, levels?: FaultLevel | readonly FaultLevel[]): PickedFault | undefined;
  /** Whether any rule acts at this level (so a transport asks for the facts only then). */
  has(level: FaultLevel): boolean;
  /** Faults injected so far. */
  readonly injected: number;
}

/** A small seeded generator (mulberry32): the same seed, the same run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function matches(rule: FaultRule, f: FaultFacts): boolean {
  const w = rule.when;
  if (w.api !== undefined && w.api !== f.provider && w.api !== f.api) return false;
  if (w.route !== undefined && w.route !== f.route) return false;
  if (w.model !== undefined && w.model !== f.model) return false;
  if (w.tool !== undefined && w.tool !== f.tool) return false;
  if (w.method !== undefined && w.method !== f.method) return false;
  return true;
}

export function createFaultPlan(rules: readonly FaultRule[], opts: { seed?: number } = {}): FaultPlan {
  const random = seeded(opts.seed ?? Date.now());
  const seen = rules.map(() => 0);
  const hits = rules.map(() => 0);
  const levels = rules.map((r) => levelOf(r.then));
  let injected = 0;
  return {
    get injected() {
      return injected;
    },
    has(level) {
      return levels.includes(level);
    },
    pick(facts, at = 'http') {
      let picked: PickedFault | undefined;
      rules.forEach((rule, i) => {
        if (!(typeof at === 'string' ? levels[i] === at : at.includes(levels[i] as FaultLevel)) || !matches(rule, facts)) return;
        const n = ++seen[i]!;
        if (picked !== undefined) return;
        const w = rule.when;
        const times = rule.times ?? (w.call !== undefined ? 1 : Infinity);
        if (hits[i]! >= times) return;
        if (w.call !== undefined && n < w.call) return;
        if (w.probability !== undefined && random() >= w.probability) return;
        hits[i]!++;
        injected++;
        picked = { then: rule.then, rule: i, description: describeRule(rule, i) };
      });
      return picked;
    },
  };
}
