/**
 * The flags of faults and contracts, shared by `record` and `replay`: `--faults FILE` and `--fault RULE` (repeatable)
 * with `--seed N`, which build the run's fault plan; `--expect KINDS` (replay), the recorded calls a run must make,
 * checked when it ends against what the replay served (`inspect/expected-calls.ts`).
 */
import { TapedeckError } from '../../errors.js';
import { createFaultPlan, type FaultPlan } from '../../engine/faults/fault-plan.js';
import { describeRule, parseFaultRule, readFaultsFile, type FaultRule } from '../../engine/faults/fault-rules.js';
import {
  expectedCount,
  missingCalls,
  parseExpect,
  renderMissing,
  unknownExpectNames,
  type ExpectSpec,
} from '../../inspect/expected-calls.js';
import type { TapeStore } from '../../tape/store.js';
import { stringList, stringValue, type OptionsConfig, type ParsedValues } from './command.js';
import type { Said } from './notice.js';
import { warning } from './notice.js';

export const FAULT_OPTIONS: OptionsConfig = {
  faults: { type: 'string' },
  fault: { type: 'string', multiple: true },
  seed: { type: 'string' },
};

export const FAULT_USAGE = [
  '  --faults FILE       inject faults: a YAML file of rules (faults: [{when: {api, route, model, tool, call, probability},',
  '                      then: {status, retryAfter, cut, reset, delay, toolError, rpcError, close}, times}])',
  "  --fault RULE        one rule inline, in the same shape: '{when: {api: openai, call: 2}, then: {status: 429}}'",
  "                      (repeatable; with --faults, the file's rules come first)",
  '  --seed N            the seed of rules with a probability: the same seed picks the same calls',
];

/** The run's fault plan, or undefined when no rule is given; the rules as the tape header and the start line name them. */
export function faultPlanFrom(values: ParsedValues): { plan: FaultPlan; rules: string[] } | undefined {
  const given = faultRulesFrom(values);
  if (given === undefined) return undefined;
  const plan = createFaultPlan(given.rules, given.seed === undefined ? {} : { seed: given.seed });
  return { plan, rules: given.rules.map(describeRule) };
}

/**
 * `serve`: a fault plan for each opening of a tape (each test's `call: N` counts within that test). With `--seed`,
 * each tape's plan is seeded from the seed and the tape's name: a test gets the same faults every run, whatever
 * the order its suite runs in, and two tests do not get the same draws.
 */
export function faultPlansFrom(values: ParsedValues): { planFor: (tape: string) => FaultPlan; rules: string[] } | undefined {
  const given = faultRulesFrom(values);
  if (given === undefined) return undefined;
  const { rules, seed } = given;
  return {
    planFor: (tape) => createFaultPlan(rules, seed === undefined ? {} : { seed: (seed ^ fnv1a(tape)) >>> 0 }),
    rules: rules.map(describeRule),
  };
}

function faultRulesFrom(values: ParsedValues): { rules: FaultRule[]; seed?: number } | undefined {
  const file = stringValue(values, 'faults');
  const rules: FaultRule[] = [...(file === undefined ? [] : readFaultsFile(file)), ...stringList(values, 'fault').map(inlineRule)];
  const seedText = stringValue(values, 'seed');
  if (seedText !== undefined && !/^\d+$/.test(seedText))
    throw new TapedeckError('BAD_ARGS', `--seed must be a whole number (got "${seedText}")`);
  if (rules.length === 0) {
    if (seedText !== undefined) throw new TapedeckError('BAD_ARGS', '--seed goes with --faults or --fault');
    return undefined;
  }
  return { rules, ...(seedText === undefined ? {} : { seed: Number(seedText) }) };
}

const RULE_EXAMPLE = "e.g. --fault '{when: {api: openai, call: 2}, then: {status: 429}}'";

/**
 * One `--fault` rule. A value that is not YAML is refused with the place the parser stopped (the value, a caret under
 * the column) and an example of a rule, since it was typed on the command line where no editor shows it.
 */
function inlineRule(text: string): FaultRule {
  try {
    return parseFaultRule(text);
  } catch (err) {
    const place = err instanceof TapedeckError ? err.details?.place : undefined;
    if (!(err instanceof TapedeckError) || !Array.isArray(place)) throw err;
    // `{api: openai call: 2}`: a missing comma reads as a block mapping inside the flow one.
    const hint = err.details?.yamlCode === 'BLOCK_IN_FLOW' ? ' (a comma missing between two entries?)' : '';
    throw new TapedeckError(
      'BAD_ARGS',
      [
        `${err.message.replace(/:$/, '')}${hint}`,
        ...place.map((l) => `  ${String(l)}`),
        `  a rule is one YAML flow mapping, ${RULE_EXAMPLE}`,
      ].join('\n'),
    );
  }
}

/** FNV-1a over a string's UTF-16 units: a small, stable hash to mix a tape's name into a seed. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export const EXPECT_USAGE = [
  '  --expect KINDS      when the run ends, every recorded call of these kinds it never made is a failure (exit 1,',
  '                      the calls listed): all, llm, tools, or tool and model names (comma-separated)',
];

export function expectFrom(values: ParsedValues): ExpectSpec | undefined {
  const text = stringValue(values, 'expect');
  return text === undefined ? undefined : parseExpect(text);
}

/**
 * The contract's verdict once the run has ended: the recorded calls of `spec`'s kinds that the replay tape never
 * served, as lines to print (a warning each), and whether any is missing.
 */
export async function checkExpected(
  store: TapeStore,
  recorded: string,
  replay: string,
  spec: ExpectSpec,
): Promise<{ failed: boolean; lines: (string | Said)[] }> {
  const source = (await store.load(recorded, { resolveFiles: false })).exchanges;
  // A replay nobody called leaves no tape: then nothing was served.
  const served = (await store.has(replay)) ? (await store.load(replay, { resolveFiles: false })).exchanges : [];
  const missing = missingCalls(source, served, spec);
  const unknown = unknownExpectNames(source, spec).map((n) =>
    warning(`--expect names ${n}, which the recording never called (a tool or model name as the tape has it)`),
  );
  if (missing.length === 0) return { failed: false, lines: [...unknown, `expected calls: all ${expectedCount(source, spec)} made`] };
  return {
    failed: true,
    lines: [...unknown, ...renderMissing(missing, expectedCount(source, spec)).map((l) => ({ text: l, tone: 'error' as const }))],
  };
}
