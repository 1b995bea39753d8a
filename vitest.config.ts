import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A hang guard, not a speed check: many tests run a dozen CLI processes, slow on a loaded two-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most tests wait on processes they start (tapedeck, servers, SDK clients): two files at a time even on two
    // cores (vitest's default there is one, which left a core idle and the suite twice as long).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ['test/global-setup.ts'],
  },
});
