/**
 * `tapedeck-proxy/vitest/global-setup`: one `tapedeck serve` for the whole test run, its URL provided to every test file
 * (`useTapedeck` picks it up). Its options from the environment (`serve-process.ts`'s `serveOptionsFromEnv`):
 * `TAPEDECK_MODE` (auto by default; `replay` in CI), `TAPEDECK_DIR`, `TAPEDECK_EXPECT`, `TAPEDECK_FAULTS`,
 * `TAPEDECK_SEED`, `TAPEDECK_RERECORD`, `TAPEDECK_MAX_AGE`, more flags in `TAPEDECK_SERVE_ARGS`. With `TAPEDECK_URL`
 * set, a running serve is used and none is started. When the run ends, the orphan tapes are listed (deleted with
 * `TAPEDECK_PRUNE_ORPHANS=1`) after a complete run only (`orphans.ts`).
 */
import type { TestProject } from 'vitest/node';
import { orphanReport } from './orphans.js';
import { serveOptionsFromEnv, startServeProcess, type ServeProcess } from './serve-process.js';

let running: ServeProcess | undefined;
let url: string | undefined;
let project: TestProject | undefined;

export async function setup(given: TestProject): Promise<void> {
  project = given;
  const external = process.env.TAPEDECK_URL || undefined;
  if (external !== undefined) {
    url = external;
    given.provide('tapedeckUrl', external);
    return;
  }
  running = await startServeProcess(serveOptionsFromEnv());
  url = running.url;
  given.provide('tapedeckUrl', running.url);
}

export async function teardown(): Promise<void> {
  try {
    if (project !== undefined && url !== undefined) {
      const prune = ['1', 'true', 'yes'].includes((process.env.TAPEDECK_PRUNE_ORPHANS ?? '').trim().toLowerCase());
      const lines = await orphanReport(project, url, prune).catch((err: unknown) => [
        `tapedeck: orphan tapes not checked: ${(err as Error).message}`,
      ]);
      for (const line of lines) process.stderr.write(`${line}\n`);
    }
  } finally {
    await running?.stop();
    running = undefined;
    url = undefined;
    project = undefined;
  }
}
