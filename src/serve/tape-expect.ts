/**
 * `serve --expect`: the contract of `replay --expect`, per test. Each opening of a replayed tape (one test, or one
 * attempt of a retried test) notes the recordings its answers came from; when the tape is closed (the helper ends
 * the test, or serve stops) a judge (`inspect/expected-calls.ts`'s `expectJudge`, given by whoever starts serve:
 * the proxy does not reach into inspect) lists the recorded calls of the expected kinds that no answer came from,
 * in `diff`'s words ("unused recordings"), as `replay --expect` prints them.
 */
import type { Exchange } from '../tape/schema.js';

/** The verdict on one test's tape: what was expected, what was never asked for, and the report lines. */
export interface ExpectVerdict {
  /** Recorded calls of the expected kinds. */
  expected: number;
  /** Those never asked for, as `replay --expect` lists them. */
  missing: { step: number; kind: string; target: string; args: string }[];
  /** `unused recordings  N of M expected recorded call(s) never made`, then a line per call; empty when none is missing. */
  report: string[];
}

export interface ExpectJudge {
  /** The verdict on a recording, given the ids of the recorded exchanges a test's answers came from. */
  judge(recorded: readonly Exchange[], used: ReadonlySet<string>): ExpectVerdict;
  /** The tool and model names the contract asks for by name. */
  names: readonly string[];
}

/** The tool and model names a tape's recording called (to warn once about an `--expect` name no tape called). */
export function calledNames(recorded: readonly Exchange[]): string[] {
  const out = new Set<string>();
  for (const ex of recorded) {
    if (ex.llm?.model !== undefined) out.add(ex.llm.model);
    if (ex.mcp?.toolName !== undefined) out.add(ex.mcp.toolName);
  }
  return [...out];
}
