/**
 * `tapedeck serve`: one proxy for a whole test suite, each test with its own tape, chosen per request (`tape-name.ts`)
 * and opened on first use (`tape-router.ts`). Each tape's requests go through the same record or replay session a
 * single-tape proxy builds (`proxy-session.ts`), with that tape's routes (a replayed tape's recorded routes), clock
 * and WebSocket sessions; the server listens like one (`listen.ts`). The test-runner helpers ask it which tape a
 * test has (`GET /@?file=...&name=...`, `test-tapes.ts`) and close a test's tape when the test is over (`DELETE /@NAME`;
 * the answer carries the `--expect` verdict). At the end of a run a helper may claim the tests that did not run
 * (`POST /@/tests`), then list or delete the orphan tapes (`GET` / `DELETE /@/orphans`, `orphan-tapes.ts`).
 */
import type { FaultPlan } from '../engine/faults/fault-plan.js';
import type { ExpectJudge } from './tape-expect.js';
import { findOrphans, pruneOrphans, type PrunedOrphans } from './orphan-tapes.js';
import { createTestPattern } from './test-pattern.js';
import { createLogger, type Logger } from '../log.js';
import { createMemoryStore } from '../tape/stores/memory-store.js';
import type { TapeStore } from '../tape/store.js';
import { Cancel } from '../engine/cancel.js';
import { shutdownReason } from '../upstream/forward.js';
import { drainWithin, listenProxy } from '../front/listen.js';
import { DEFAULT_TIMEOUTS, type ForwardProxySettings, type Timeouts } from '../front/proxy-options.js';
import { proxyDispatcher } from '../front/server.js';
import { storeOf } from '../tape/stores/open-store.js';
import { createTapeRouter, type ServeMode, type TapeReport, type TapeRouterOptions } from './tape-router.js';
import { createTestTapes, type TestTapes } from './test-tapes.js';
import { createServeFront, notFoundWithEarlier } from './serve-front.js';

export type { ServeMode, TapeReport } from './tape-router.js';
export type { PrunedOrphans } from './orphan-tapes.js';

export interface ServeOptions {
  mode: ServeMode;
  /** Where the tapes are: a store, or a tape folder (`dir`). One of the two. */
  store?: TapeStore;
  dir?: string;
  host?: string;
  /** 0 takes any free port. Default 8787. */
  port?: number;
  allowHosts?: readonly string[];
  forwardProxy?: ForwardProxySettings;
  timeouts?: Partial<Timeouts>;
  log?: Logger;
  /** The tape of a request that names none (default: such a request is answered 400 NO_TAPE). */
  defaultTape?: string;
  /** Keep each replay's replay tape beside its tape (default: replay tapes are not kept). */
  saveReplays?: boolean;
  /** Settings of the tapes recorded and of the tapes replayed (routes, redaction, matcher, responders, ...). */
  record: TapeRouterOptions['record'];
  replay: TapeRouterOptions['replay'];
  /** A fresh fault plan for each opening of a tape: each test's `call: N` counts within that test. */
  faults?: (tape: string) => FaultPlan;
  /** The recorded calls each replayed test must make, checked when its tape is closed (`--expect`: `expectJudge(spec)`). */
  expect?: ExpectJudge;
  /** Globs over test names and tape names: those tests record their tape afresh, whatever the mode (`--rerecord`). */
  rerecord?: readonly string[];
  /** The oldest a tape may be (`--max-age`): older, it is recorded afresh (auto) or refused (replay). */
  maxAge?: { ms: number; text: string };
}

export interface RunningServe {
  url: string;
  host: string;
  port: number;
  /** What each tape did so far, in the order the tapes were first asked for. */
  tapes(): TapeReport[];
  /** Stop accepting, end open streams, finish writing every tape; resolves to what each tape did. */
  close(): Promise<TapeReport[]>;
  /** The recordings in the store that no test of this run opened, was given or claimed (after a complete run: orphans). */
  orphans(): Promise<string[]>;
  /** Delete them (only after a run that reached every test). */
  pruneOrphans(): Promise<PrunedOrphans>;
  /** `--expect` names no replayed tape's recording called. */
  unknownExpectNames(): string[];
}

export async function startServe(opts: ServeOptions): Promise<RunningServe> {
  const log = opts.log ?? createLogger();
  const timeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
  const store = storeOf(opts);
  const dispatcher = proxyDispatcher(timeouts);
  const stopping = new Cancel();
  const pattern = opts.rerecord !== undefined && opts.rerecord.length > 0 ? createTestPattern(opts.rerecord) : undefined;
  const testTapes = createTestTapes(store, { rerecord: pattern });
  const router = createTapeRouter({
    mode: opts.mode,
    store,
    replayStore: opts.saveReplays === true ? store : createMemoryStore(),
    record: opts.record,
    replay: opts.replay,
    context: { dispatcher, stopping, log, timeouts },
    faults: opts.faults,
    expect: opts.expect,
    freshness: {
      rerecord: (tape) => testTapes.rerecords(tape) || pattern?.matches([tape]) === true,
      maxAge: opts.maxAge,
    },
  });
  const used = (name: string): boolean => router.knows(name) || testTapes.belongsToTest(name) || name === opts.defaultTape;
  const orphans = (): Promise<string[]> => findOrphans(store, used);
  const prune = async (): Promise<PrunedOrphans> => pruneOrphans(store, await orphans());
  const withEarlier = (report: TapeReport[]): TapeReport[] => report.map((row) => withEarlierTape(row, testTapes));
  const listening = await listenProxy({ ...opts, log }, (own, forward) =>
    createServeFront({
      router,
      testTapes,
      orphans,
      prune,
      own,
      forward,
      log,
      defaultTape: opts.defaultTape,
      drain: (work) => drainWithin(work, timeouts.shutdownMs, log),
    }),
  ).catch(async (err: unknown) => {
    await dispatcher.close().catch(() => undefined);
    throw err;
  });
  let closing: Promise<TapeReport[]> | undefined;
  return {
    url: listening.url,
    host: listening.host,
    port: listening.port,
    tapes: () => withEarlier(router.report()),
    orphans,
    pruneOrphans: prune,
    unknownExpectNames: () => router.unknownExpectNames(),
    close() {
      closing ??= (async () => {
        stopping.abort(shutdownReason());
        await listening.stop(() => router.endSessions());
        const report = await router.close((work) => drainWithin(work, timeouts.shutdownMs, log));
        await dispatcher.destroy().catch(() => undefined);
        return withEarlier(report);
      })();
      return closing;
    },
  };
}

/**
 * A test's tape that did not exist while the tape the earlier naming rule gave it does: its report row says where that
 * recording is, and so does a replay's "not found".
 */
function withEarlierTape(row: TapeReport, testTapes: TestTapes): TapeReport {
  const earlier = testTapes.earlierOf(row.tape);
  if (earlier === undefined) return row;
  const error = row.error?.code === 'TAPE_NOT_FOUND' ? { error: { ...row.error, message: notFoundWithEarlier(row.tape, earlier) } } : {};
  return { ...row, earlier, ...error };
}
