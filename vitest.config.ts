import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The README walkthroughs first (test/readme/walkthroughs-*.test.ts): the longest files (~25 s each), though small,
 * so vitest would run them last where it has no timings yet (a fresh clone: largest files first), and the run would
 * end on one worker. The rest in vitest's order (failed first, then longest).
 */
class WalkthroughsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const walkthrough = (f: TestSpecification): boolean => /[/\\]test[/\\]readme[/\\]walkthroughs-[^/\\]+$/.test(f.moduleId);
    return [...sorted.filter(walkthrough), ...sorted.filter((f) => !walkthrough(f))];
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A hang guard, not a speed check: many tests run a dozen CLI processes, slow on a loaded two-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One module cache per worker rather than one per test file: importing the source and its libraries again for
    // each of ~110 files was ~0.3 s of CPU per file (a third of the unit tests' time). Tests leave no module state
    // behind (a provider a test registers, it unregisters).
    isolate: false,
    // Most tests wait on processes they start (tapedeck, servers, SDK clients): two files at a time even on two
    // cores (vitest's default there is one, which left a core idle and the suite twice as long).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ['test/global-setup.ts'],
    sequence: { sequencer: WalkthroughsFirst },
  },
});
