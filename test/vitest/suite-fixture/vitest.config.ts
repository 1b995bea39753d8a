import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The project `vitest-suite.test.ts` runs: one serve for the run (the global setup), its options from the environment.
export default defineConfig({
  test: {
    include: ['*.fixture.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    globalSetup: [fileURLToPath(new URL('../../../src/vitest/global-setup.ts', import.meta.url))],
  },
});
