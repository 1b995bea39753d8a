import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The documentation walkthroughs first (test/readme/walkthroughs-*.test.ts): the longest files (~25 s each), though small,
 * so vitest would run them last where it has no timings yet (a fresh clone: largest first), and the run would end on
 * one worker. The first of them builds the copy of the clone they share (~15 s; test/readme/walkthrough-clone.ts):
 * meanwhile the other worker runs a few other files rather than wait for it. Then the other walkthroughs, the
 * packaging test (long too: it builds and packs a copy of its own, then installs from a loopback registry), and the
 * rest in vitest's order (failed first, then longest).
 */
class WalkthroughsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const walkthrough = (f: TestSpecification): boolean => /[/\\]test[/\\]readme[/\\]walkthroughs-[^/\\]+$/.test(f.moduleId);
    const packaging = (f: TestSpecification): boolean => /[/\\]test[/\\]packaging\.test\.ts$/.test(f.moduleId);
    const [first, ...walkthroughs] = sorted.filter(walkthrough);
    const others = sorted.filter((f) => !walkthrough(f) && !packaging(f));
    if (first === undefined) return sorted;
    return [first, ...others.slice(0, 3), ...walkthroughs, ...sorted.filter(packaging), ...others.slice(3)];
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
