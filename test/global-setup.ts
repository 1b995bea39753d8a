/**
 * Once per test run: the source transpiled for the CLI processes tests start (`inject('srcBuild')`,
 * test/helpers/build-src.ts); where the documentation walkthroughs' copy of the clone goes (`inject('walkthroughClone')`,
 * built by the first walkthrough file that runs, test/readme/walkthrough-clone.ts; removed at the end); and a throwaway PostgreSQL cluster for the PostgreSQL store's tests (test/helpers/postgres.ts),
 * handed to them as `inject('pgUrl')`, removed at the end. `TAPEDECK_TEST_PG_URL` uses a server of your own instead.
 * Where no server can start, those tests skip with the reason (`inject('pgNote')`); under CI=true they must run.
 */
import type { TestProject } from 'vitest/node';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSource, removeBuild } from './helpers/build-src.js';
import { removeWalkthroughClone } from './readme/walkthrough-clone.js';
import { startPgCluster, type PgCluster } from './helpers/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string | null;
    pgNote: string;
    srcBuild: string;
    walkthroughClone: string;
  }
}

let cluster: PgCluster | undefined;
let build: string | undefined;
const clone = path.join(tmpdir(), `tapedeck-walkthrough-${process.pid}`);

export async function setup(project: TestProject): Promise<void> {
  build = await buildSource();
  project.provide('srcBuild', build);
  project.provide('walkthroughClone', clone);
  // Watch mode: the source as it is now, for the processes the rerun starts (and a clone of it, for the walkthroughs).
  project.onTestsRerun(async () => {
    await buildSource();
    removeWalkthroughClone(clone);
  });
  const given = process.env.TAPEDECK_TEST_PG_URL;
  if (given) {
    project.provide('pgUrl', given);
    project.provide('pgNote', '');
    return;
  }
  try {
    cluster = await startPgCluster();
    project.provide('pgUrl', cluster.url);
    project.provide('pgNote', '');
  } catch (err) {
    const why = (err as Error).message.split('\n')[0] ?? String(err);
    if (process.env.CI === 'true') throw new Error(`CI=true and the PostgreSQL tests cannot run: ${why}`);
    project.provide('pgUrl', null);
    project.provide('pgNote', `PostgreSQL store tests skipped: no throwaway server could start here (${why})`);
  }
}

export function teardown(): void {
  cluster?.stop();
  removeWalkthroughClone(clone);
  if (build !== undefined) removeBuild(build);
}
