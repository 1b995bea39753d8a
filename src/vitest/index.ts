/**
 * `tapedeck-proxy/vitest`: each test gets its own tape in one `tapedeck serve`, named after the test (the server names it:
 * `GET /@?file=...&name=...`, the rule every test-runner helper shares), with the base-URL
 * variables the SDKs read (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`, `TAPEDECK_URL`, ...)
 * pointing at it while the test runs.
 *
 *   // vitest.config.ts: one server for the run (or set TAPEDECK_URL to a running `tapedeck serve`)
 *   test: { globalSetup: ['tapedeck-proxy/vitest/global-setup'] }
 *   // a test file (or a setupFiles entry)
 *   const deck = useTapedeck();
 *   it('answers', async () => { const openai = new OpenAI(); ... deck.tape ... });
 *
 * Without either, `useTapedeck()` starts a `tapedeck serve` for its file (its options, then the environment's, as the
 * global setup reads them). The variables are process-wide: tests of a file that run concurrently (`it.concurrent`)
 * should take `deck.urlFor(task)` (or `deck.env`) instead.
 *
 * A test fails with serve's own words when its tape is too old to replay (`--max-age`: the line says how to refresh
 * it), and when its tape is closed having missed recorded calls it was expected to make (`--expect`: the report in
 * `diff`'s words, "unused recordings").
 */
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import { agentEnv } from '../run/agent-env.js';
import type { TapeReport } from '../serve/tape-router.js';
import { serveOptionsFromEnv, startServeProcess, type ServeProcess, type ServeProcessOptions } from './serve-process.js';
import { testIdOf, testTapeName, type NamedTask } from './test-tape-name.js';

export { serveOptionsFromEnv, startServeProcess, type ServeProcess, type ServeProcessOptions } from './serve-process.js';
export { testIdOf, testTapeName, type NamedTask } from './test-tape-name.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL of the `tapedeck serve` the global setup started. */
    tapedeckUrl: string;
  }
}

export interface UseTapedeckOptions extends ServeProcessOptions {
  /** Name the tape of a test yourself (default: the server names it after file / describe / test, as `testTapeName`). */
  tapeName?: (task: NamedTask) => string;
}

export interface Tapedeck {
  /** The current test's tape. */
  readonly tape: string;
  /** Its base URL (`<serve>/@TAPE`): add a route's prefix (`/openai/v1`). */
  readonly url: string;
  /** The variables set for the current test. */
  readonly env: Readonly<Record<string, string>>;
  /** The base URL of any test's tape (for concurrent tests; named here by `testTapeName`, the server's rule). */
  urlFor(task: NamedTask): string;
}

/** The base URL of a tape in a `tapedeck serve` at `serveUrl`. */
export function tapeUrl(serveUrl: string, tape: string): string {
  return `${serveUrl.replace(/\/+$/, '')}/@${encodeURIComponent(tape)}`;
}

/** The tape `tapedeck serve` at `serveUrl` gives a test (`GET /@?file=...&name=...`); a refusal is thrown as it says. */
export async function askTapeName(serveUrl: string, task: NamedTask): Promise<string> {
  const id = testIdOf(task);
  const query = new URLSearchParams([['file', id.file], ...id.names.map((n) => ['name', n] as [string, string])]);
  const res = await fetch(`${serveUrl.replace(/\/+$/, '')}/@?${query.toString()}`);
  const body = (await res.json().catch(() => ({}))) as { tape?: string; error?: { message?: string; type?: string } };
  // Too old to replay (--max-age): serve's one line, which says how to refresh it, is the test's failure.
  if (body.error?.type === 'tapedeck_tape_too_old') throw new TapedeckTestError(`tapedeck: ${body.error.message ?? ''}`);
  if (!res.ok || typeof body.tape !== 'string')
    throw new Error(`tapedeck: no tape for this test: ${body.error?.message ?? `tapedeck serve at ${serveUrl} answered ${res.status}`}`);
  return body.tape;
}

/** A test's failure tapedeck explains in its own words (no stack to read). */
class TapedeckTestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TapedeckError';
    this.stack = `${this.name}: ${message}`;
  }
}

/**
 * Close the tape of a test that is over (`DELETE /@NAME`); with `--expect`, the recorded calls it never made fail the
 * test: serve's report, in `diff`'s words.
 */
export async function endTestTape(url: string, tape: string): Promise<void> {
  const res = await fetch(url, { method: 'DELETE' }).catch(() => undefined);
  const body = (await res?.json().catch(() => undefined)) as { tape?: TapeReport | null } | undefined;
  const report = body?.tape?.expect?.report ?? [];
  if (report.length > 0) throw new TapedeckTestError([`tapedeck --expect: this test's tape "${tape}":`, ...report].join('\n'));
}

export function useTapedeck(opts: UseTapedeckOptions = {}): Tapedeck {
  const nameOf = opts.tapeName ?? testTapeName;
  const given = process.env.TAPEDECK_URL || undefined;
  let own: ServeProcess | undefined;
  let serveUrl: string | undefined;
  let current: { tape: string; url: string; env: Record<string, string> } | undefined;
  const saved = new Map<string, string | undefined>();

  beforeAll(async () => {
    serveUrl = provided() || given;
    if (serveUrl === undefined) {
      own = await startServeProcess({ ...serveOptionsFromEnv(), ...opts });
      serveUrl = own.url;
    }
  });
  afterAll(async () => {
    await own?.stop();
  });
  beforeEach(async (ctx) => {
    const tape = opts.tapeName !== undefined ? opts.tapeName(ctx.task) : await askTapeName(serveUrl as string, ctx.task);
    const url = tapeUrl(serveUrl as string, tape);
    const env = agentEnv({ url });
    for (const [k, v] of Object.entries(env)) {
      saved.set(k, process.env[k]);
      process.env[k] = v;
    }
    current = { tape, url, env };
  });
  afterEach(async () => {
    const ended = current;
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    saved.clear();
    current = undefined;
    // The test is over: its tape is closed now (its file and lock given back), not when the run ends.
    if (ended !== undefined) await endTestTape(ended.url, ended.tape);
  });

  const now = (): NonNullable<typeof current> => {
    if (current === undefined) throw new Error('tapedeck: the tape of a test is known inside the test only (after beforeEach)');
    return current;
  };
  return {
    get tape() {
      return now().tape;
    },
    get url() {
      return now().url;
    },
    get env() {
      return now().env;
    },
    urlFor: (task) => tapeUrl(serveUrl as string, nameOf(task)),
  };
}

/** The URL the global setup provided, if it ran. */
function provided(): string | undefined {
  try {
    return inject('tapedeckUrl');
  } catch {
    return undefined;
  }
}
