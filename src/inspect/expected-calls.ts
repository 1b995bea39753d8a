/**
 * Contracts in both directions (`--expect`): replay already fails on a call the tape does not have; this is the other
 * half, the recorded calls a run never made. An agent that silently stops calling `refund_order` replays every call
 * it still makes without a miss, and would pass. Given the recording and its replay tape, the recorded calls of the
 * expected kinds that no answer of the replay came from (`match.source`) are the missing ones: the same count `diff`
 * calls "unused recordings", listed with their step, kind, tool or model, and a short summary of their arguments.
 */
import { notTheUpstreams } from '../replay/servable.js';
import { closestNames } from '../edit-distance.js';
import { TapedeckError } from '../errors.js';
import { STREAM_METHOD, type Exchange } from '../tape/schema.js';
import { shorten } from './format.js';
import { toSteps, type StepKind } from './steps.js';

/** Which recorded calls a run must make: every kind, LLM calls, tool calls, or calls to these tools or models. */
export interface ExpectSpec {
  llm: boolean;
  tools: boolean;
  /** Tool names (MCP `tools/call`) and models (LLM calls), each a call the run must make. */
  names: ReadonlySet<string>;
}

/** `all`, `llm`, `tools`, or names (tools or models), comma-separated; `llm,refund_order` mixes them. */
export function parseExpect(text: string): ExpectSpec {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) throw new TapedeckError('BAD_ARGS', '--expect needs all, llm, tools, or tool and model names (comma-separated)');
  const names = new Set(parts.filter((p) => p !== 'all' && p !== 'llm' && p !== 'tools'));
  const all = parts.includes('all');
  return { llm: all || parts.includes('llm'), tools: all || parts.includes('tools'), names };
}

/** A recorded call the run never made. */
export interface MissingCall {
  /** Its step on the recording's timeline (as `show` numbers them). */
  step: number;
  kind: StepKind;
  /** The tool (MCP), the model (LLM), or the method and path (HTTP). */
  target: string;
  /** Its arguments, shortened to one line. */
  args: string;
  exchange: Exchange;
}

/** What the contract checks: the calls a run makes (not notifications, streams or a session's own handshake). */
function isCall(ex: Exchange): boolean {
  if (ex.llm !== undefined || ex.websocket !== undefined) return true;
  if (ex.mcp !== undefined)
    return ex.mcp.direction === 'client-to-server' && ex.mcp.method !== STREAM_METHOD && ex.mcp.jsonrpcId !== undefined;
  return ex.transport === 'http';
}

function expected(ex: Exchange, spec: ExpectSpec): boolean {
  // An answer a fault rule injected, or tapedeck's own error, is no recording of the upstream's: replay never serves it.
  if (!isCall(ex) || notTheUpstreams(ex) !== undefined) return false;
  if (ex.llm !== undefined) return spec.llm || (ex.llm.model !== undefined && spec.names.has(ex.llm.model));
  // A session (Realtime, Live) is the call its responses came from: the model's, for `llm`.
  if (ex.websocket !== undefined) return spec.llm;
  const tool = ex.mcp?.toolName;
  if (tool !== undefined) return spec.tools || spec.names.has(tool);
  // A tool the agent calls over plain HTTP counts as a tool; other MCP requests (initialize, tools/list) only under `all`.
  return ex.mcp === undefined ? spec.tools : spec.llm && spec.tools;
}

/** The recorded calls of the expected kinds that no answer of `replay` came from, in timeline order. */
export function missingCalls(recorded: readonly Exchange[], replay: readonly Exchange[], spec: ExpectSpec): MissingCall[] {
  const used = new Set<string>();
  for (const ex of replay) if (ex.match?.source !== undefined) used.add(ex.match.source);
  return missingCallsOf(recorded, used, spec);
}

/** The same, given the ids of the recorded exchanges answers came from (what `tapedeck serve` tallies as it replays). */
export function missingCallsOf(recorded: readonly Exchange[], used: ReadonlySet<string>, spec: ExpectSpec): MissingCall[] {
  const out: MissingCall[] = [];
  for (const step of toSteps(recorded)) {
    const ex = step.exchange;
    // A session's responses are steps of their own, read from its messages: the session is the call.
    if (ex.notes?.session !== undefined || !expected(ex, spec) || used.has(ex.id)) continue;
    const target = step.kind === 'HTTP' ? `${ex.request.method} ${ex.route}${ex.request.path}` : step.target;
    out.push({ step: step.index, kind: step.kind, target, args: shorten(step.args, 60), exchange: ex });
  }
  return out;
}

/** Names asked for that the recording never called (a typo in `--expect`, or a tool the recording did not use). */
export function unknownExpectNames(recorded: readonly Exchange[], spec: ExpectSpec): string[] {
  const seen = new Set(calledNames(recorded));
  return [...spec.names].filter((n) => !seen.has(n));
}

/** The kind `--expect` takes that a name is a slip of (`al` for `all`), if one is. */
export function expectKindNear(name: string): string | undefined {
  return closestNames(name, EXPECT_KINDS, 1)[0];
}

/**
 * Refuse names the recording never called (a typo in `--expect`: `al` for `all`), in one line with the closest names
 * it did call, or the kinds: checked before the run, so a contract that can never fail is never run.
 */
export function refuseUnknownExpectNames(recorded: readonly Exchange[], spec: ExpectSpec, tape: string): void {
  const unknown = unknownExpectNames(recorded, spec);
  const first = unknown[0];
  if (first === undefined) return;
  const called = calledNames(recorded);
  const near = closestNames(first, [...EXPECT_KINDS, ...called], 1)[0];
  const listed =
    called.length === 0 ? 'it called no tool or model' : `it called ${called.slice(0, 8).join(', ')}${called.length > 8 ? ', ...' : ''}`;
  throw new TapedeckError(
    'BAD_ARGS',
    `--expect names ${unknown.map((n) => `"${n}"`).join(', ')}, which the recording "${tape}" never called` +
      `${near !== undefined ? `: did you mean ${near}?` : ''} (--expect takes all, llm, tools, or tool and model names; ${listed})`,
  );
}

/** The kinds `--expect` takes besides names. */
const EXPECT_KINDS = ['all', 'llm', 'tools'] as const;

/** The tool and model names a recording called, sorted. */
function calledNames(recorded: readonly Exchange[]): string[] {
  const seen = new Set<string>();
  for (const ex of recorded) {
    if (ex.llm?.model !== undefined) seen.add(ex.llm.model);
    if (ex.mcp?.toolName !== undefined) seen.add(ex.mcp.toolName);
  }
  return [...seen].sort();
}

/** The report, in `diff`'s words: `unused recordings  N of M recorded call(s) never made`, then one line per call. */
export function renderMissing(missing: readonly MissingCall[], expectedCount: number): string[] {
  const lines = [`unused recordings  ${missing.length} of ${expectedCount} expected recorded call(s) never made`];
  for (const m of missing) lines.push(`  step ${m.step}  ${m.kind} ${m.target}${m.args === '' ? '' : `  ${m.args}`}`);
  return lines;
}

/** How many recorded calls the spec expects (the report's denominator). */
export function expectedCount(recorded: readonly Exchange[], spec: ExpectSpec): number {
  return recorded.filter((ex) => ex.notes?.session === undefined && expected(ex, spec)).length;
}

/** The verdict on one test's tape (`tapedeck serve --expect`): what was expected, what was never asked for, the report. */
export interface ExpectVerdict {
  /** Recorded calls of the expected kinds. */
  expected: number;
  /** Those never asked for, as `replay --expect` lists them. */
  missing: { step: number; kind: string; target: string; args: string }[];
  /** `unused recordings  N of M expected recorded call(s) never made`, then a line per call; empty when none is missing. */
  report: string[];
}

/**
 * `serve --expect`: how each replayed test's tape is judged when it is closed, given the recordings its answers came
 * from; and the names the spec asks for (to warn of one no tape called).
 */
export function expectJudge(spec: ExpectSpec): {
  judge(recorded: readonly Exchange[], used: ReadonlySet<string>): ExpectVerdict;
  names: readonly string[];
} {
  return {
    judge(recorded, used) {
      const missing = missingCallsOf(recorded, used, spec);
      const expected = expectedCount(recorded, spec);
      return {
        expected,
        missing: missing.map(({ step, kind, target, args }) => ({ step, kind, target, args })),
        report: missing.length === 0 ? [] : renderMissing(missing, expected),
      };
    },
    names: [...spec.names],
  };
}
