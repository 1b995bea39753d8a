/**
 * `tapedeck-proxy/vitest/global-setup`: one `tapedeck serve` for the whole test run, its URL provided to every test file
 * (`useTapedeck` picks it up). Mode and folder from `TAPEDECK_MODE` (auto by default; `replay` in CI) and
 * `TAPEDECK_DIR`; more serve flags in `TAPEDECK_SERVE_ARGS` (space-separated). With `TAPEDECK_URL` set, a running
 * serve is used and none is started.
 */
import type { TestProject } from 'vitest/node';
import { startServeProcess, type ServeProcess } from './serve-process.js';

let running: ServeProcess | undefined;

export async function setup(project: TestProject): Promise<void> {
  const given = process.env.TAPEDECK_URL || undefined;
  if (given !== undefined) {
    project.provide('tapedeckUrl', given);
    return;
  }
  const extra = process.env.TAPEDECK_SERVE_ARGS?.trim();
  running = await startServeProcess({
    ...(process.env.TAPEDECK_MODE ? { mode: process.env.TAPEDECK_MODE } : {}),
    ...(extra ? { args: extra.split(/\s+/) } : {}),
  });
  project.provide('tapedeckUrl', running.url);
}

export async function teardown(): Promise<void> {
  await running?.stop();
  running = undefined;
}
