/**
 * Tapes named for tests: `GET /@?file=FILE&name=SUITE&name=TEST` answers the tape of that test (`{"tape": NAME}`),
 * so a test-runner helper in any language sends the test's names as they are and the server alone decides its tape
 * (`tape/test-tape-name.ts`). Two different tests that would get one tape in this run are refused, saying which. A
 * test whose tape does not exist yet, while the tape the earlier naming rule gave it does, is told so
 * (`"earlier": NAME`), and its tape's report line and a replay's "not found" say where that recording is.
 * A test `--rerecord` names has its tape recorded afresh. Tests that did not run (skipped, filtered out) can be
 * claimed in bulk at the end of a run (`POST /@/tests`), so that their tapes are not taken for orphans.
 */
import { isTapedeckError, TapedeckError } from '../errors.js';
import { validateTapeName } from '../tape/paths.js';
import type { TapeStore } from '../tape/store.js';
import { earlierTapeNameForTest, tapeNameForTest, TestIdSchema, type TestId } from '../tape/test-tape-name.js';
import { namesOfTest, type TestPattern } from './test-pattern.js';

export interface TestTape {
  tape: string;
  /** The tape the earlier naming rule gave this test, still in the store while `tape` is not. */
  earlier?: string;
}

export interface TestTapes {
  /** The tape of the test the query names (`file`, and `name` once per suite and for the test, outermost first). */
  tapeFor(query: URLSearchParams): Promise<TestTape>;
  /** The earlier tape found for a tape given out, if any. */
  earlierOf(tape: string): string | undefined;
  /** Note tests of the run (that may not have run): their tapes, and the earlier rule's, belong to a test. */
  claim(tests: readonly TestId[]): string[];
  /** Whether the tape is a test's of this run (given, or claimed), or the tape the earlier rule gave one. */
  belongsToTest(tape: string): boolean;
  /** Whether the test given this tape matched `--rerecord`. */
  rerecords(tape: string): boolean;
}

export function createTestTapes(store: TapeStore, opts: { rerecord?: TestPattern | undefined } = {}): TestTapes {
  // Which test each tape was given to in this run, and the earlier tapes found.
  const owners = new Map<string, string>();
  const earlier = new Map<string, string>();
  // Tapes of tests claimed, with the earlier rule's names; tapes of tests --rerecord names.
  const claimed = new Set<string>();
  const rerecorded = new Set<string>();

  return {
    async tapeFor(query) {
      const parsed = TestIdSchema.safeParse({ file: query.get('file') ?? '', names: query.getAll('name') });
      if (!parsed.success)
        throw new TapedeckError('BAD_ARGS', 'GET /@ names a test: ?file=FILE&name=NAME (a name per suite, then the test)', {
          status: 400,
        });
      const test = parsed.data;
      const tape = validateTapeName(tapeNameForTest(test));
      const key = describe(test);
      const owner = owners.get(tape);
      if (owner !== undefined && owner !== key)
        throw new TapedeckError(
          'BAD_ARGS',
          `tests ${owner} and ${key} would share the tape "${tape}": rename one of them (or their files) so that their tapes differ`,
          { status: 409, details: { tape } },
        );
      owners.set(tape, key);
      claimed.add(earlierTapeNameForTest(test));
      if (opts.rerecord?.matches(namesOfTest(test, tape)) === true) rerecorded.add(tape);
      const before = earlierTapeNameForTest(test);
      if (before !== tape && !earlier.has(tape) && !(await store.has(tape)) && (await existing(store, before))) earlier.set(tape, before);
      const found = earlier.get(tape);
      return { tape, ...(found !== undefined ? { earlier: found } : {}) };
    },
    earlierOf: (tape) => earlier.get(tape),
    claim(tests) {
      return tests.map((test) => {
        const tape = tapeNameForTest(test);
        claimed.add(tape);
        claimed.add(earlierTapeNameForTest(test));
        return tape;
      });
    },
    belongsToTest: (tape) => owners.has(tape) || claimed.has(tape),
    rerecords: (tape) => rerecorded.has(tape),
  };
}

/** `"tests/agent.test.ts > weather > answers"`, as messages name a test. */
function describe(test: TestId): string {
  return JSON.stringify([test.file, ...test.names].filter((p) => p !== '').join(' > '));
}

/** Whether the earlier name is a tape in the store (an earlier name that is no tape name at all is not). */
async function existing(store: TapeStore, name: string): Promise<boolean> {
  try {
    validateTapeName(name);
  } catch (err) {
    if (isTapedeckError(err) && err.code === 'BAD_ARGS') return false;
    throw err;
  }
  return store.has(name);
}
