/**
 * `tapedeck serve`: one proxy for a whole test suite, each test with its own tape, chosen per request (`tape-name.ts`)
 * and opened on first use (`tape-router.ts`). Each tape's requests go through the same record or replay session a
 * single-tape proxy builds (`proxy-session.ts`), with that tape's routes (a replayed tape's recorded routes), clock
 * and WebSocket sessions; the server listens like one (`listen.ts`). The test-runner helpers ask it which tape a
 * test has (`GET /@?file=...&name=...`, `test-tapes.ts`) and close a test's tape when the test is over (`DELETE /@NAME`;
 * the answer carries the `--expect` verdict). At the end of a run a helper may claim the tests that did not run
 * (`POST /@/tests`), then list or delete the orphan tapes (`GET` / `DELETE /@/orphans`, `orphan-tapes.ts`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { z } from 'zod';
import type { FaultPlan } from '../engine/faults/fault-plan.js';
import { isTapedeckError, TapedeckError } from '../errors.js';
import { TestIdSchema } from '../tape/test-tape-name.js';
import type { ExpectJudge } from './tape-expect.js';
import { findOrphans, pruneOrphans, type PrunedOrphans } from './orphan-tapes.js';
import { createTestPattern } from './test-pattern.js';
import { createLogger, type Logger } from '../log.js';
import type { OwnHosts } from '../own-hosts.js';
import { detectLlmApi } from '../providers/detect.js';
import { httpError } from '../providers/errors.js';
import { createMemoryStore } from '../tape/stores/memory-store.js';
import type { TapeStore } from '../tape/store.js';
import { Cancel } from '../engine/cancel.js';
import type { ForwardProxy } from '../front/forward-proxy.js';
import { shutdownReason } from '../upstream/forward.js';
import { hostRefusal } from '../host-guard.js';
import { createRequestListener } from '../front/http-app.js';
import { drainWithin, listenProxy, type Front } from '../front/listen.js';
import type { ProxySession } from '../front/proxy-session.js';
import { DEFAULT_TIMEOUTS, type ForwardProxySettings, type Timeouts } from '../front/proxy-options.js';
import { proxyDispatcher } from '../front/server.js';
import { storeOf } from '../tape/stores/open-store.js';
import { chooseTape, TAPE_HEADER } from './tape-name.js';
import { createTapeRouter, type ServeMode, type TapeReport, type TapeRouterOptions } from './tape-router.js';
import { refuseRaw } from '../http/raw-answer.js';
import { createTestTapes, type TestTapes } from './test-tapes.js';
import { sendError } from '../http/sink.js';
import { createUpgradeListener } from '../front/ws-upgrade.js';

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

function notFoundWithEarlier(tape: string, earlier: string): string {
  return (
    `no tape "${tape}": this test's recording is probably the tape "${earlier}", named by the earlier naming rule ` +
    `(which several tests could share): rename it to "${tape}" if it holds this test alone, else record the test again`
  );
}

interface FrontOptions {
  router: ReturnType<typeof createTapeRouter>;
  testTapes: TestTapes;
  orphans: () => Promise<string[]>;
  prune: () => Promise<PrunedOrphans>;
  own: OwnHosts;
  forward: ForwardProxy;
  log: Logger;
  defaultTape?: string | undefined;
  /** Bounds the wait for a tape's exchanges when it is closed early. */
  drain: (work: Promise<void>) => Promise<void>;
}

/** `DELETE /@NAME`: close that tape now (a test helper, when its test is over). */
const CLOSE_TAPE = /^\/@[^/?#]+\/?$/;
/** `GET /@?file=FILE&name=NAME...`: the tape of that test. */
const TEST_TAPE = /^\/@\/?(\?|$)/;
/** `GET /@/orphans`: the orphan tapes; `DELETE /@/orphans`: delete them. */
const ORPHANS = /^\/@\/orphans\/?(\?.*)?$/;
/** `POST /@/tests` `{"tests": [{file, names}]}`: tests of the run that may not have run; their tapes are no orphans. */
const TESTS = /^\/@\/tests\/?(\?.*)?$/;
/** The most a claim of tests may send (a suite of a hundred thousand tests is a few MB). */
const MAX_CLAIM_BYTES = 32 * 1024 * 1024;
const ClaimSchema = z.object({ tests: z.array(TestIdSchema) });

/** The request and upgrade listeners: choose the tape, open its session, hand the request to that session's listeners. */
function createServeFront({ router, testTapes, orphans, prune, own, forward, log, defaultTape, drain }: FrontOptions): Front {
  // Each session's listeners, built once: its routes, its handlers, its tape's clock.
  const fronts = new WeakMap<ProxySession, Front>();
  const frontOf = (session: ProxySession): Front => {
    let front = fronts.get(session);
    if (front === undefined) {
      const clock = (): number => session.writer.now();
      const request = createRequestListener({
        routes: session.routes,
        handle: session.handle,
        clock,
        log,
        own,
        forward,
        spill: session.spill,
      });
      const upgrade = createUpgradeListener({
        routes: session.routes,
        sessions: session.sessions,
        clock,
        log,
        own,
        forward,
        plain: request,
      });
      front = { request, upgrade };
      fronts.set(session, front);
    }
    return front;
  };

  /** The tape of `req` and its session; the URL loses its `/@NAME` prefix and the headers the tape header. */
  const route = async (req: IncomingMessage): Promise<Front> => {
    const target = forward.targetOf(req);
    if (target === undefined) {
      // Addressed to tapedeck by name: the Host guard first, so that no page a browser visits can open a tape.
      const refused = hostRefusal(req.headers, { own });
      if (refused !== undefined) throw refused;
    }
    const choice = chooseTape(req, target === undefined || target.self, defaultTape);
    req.url = choice.url;
    delete req.headers[TAPE_HEADER];
    const { session } = await router.open(choice.tape).catch((err: unknown) => {
      const earlier = testTapes.earlierOf(choice.tape);
      if (earlier === undefined || !isTapedeckError(err) || err.code !== 'TAPE_NOT_FOUND') throw err;
      throw new TapedeckError('TAPE_NOT_FOUND', notFoundWithEarlier(choice.tape, earlier), { details: { tape: choice.tape, earlier } });
    });
    return frontOf(session);
  };

  /** The tape of the test `GET /@?file=...&name=...` names, as JSON: `{"tape": NAME, "earlier"?: NAME}`. */
  const answerTestTape = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    req.resume();
    const refused = hostRefusal(req.headers, { own, who: "one of tapedeck's own names" });
    if (refused !== undefined) throw refused;
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    const answer = await testTapes.tapeFor(query);
    // A tape too old to replay (--max-age) fails its test at once, with the line that says how to refresh it.
    await router.checkAge(answer.tape);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  };

  /** Close the tape `DELETE /@NAME` names; answers what it did (`{"tape": null}` when it was not open). */
  const closeTape = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    req.resume();
    const refused = hostRefusal(req.headers, { own, who: "one of tapedeck's own names" });
    if (refused !== undefined) throw refused;
    const { tape } = chooseTape(req, true);
    const report = await router.release(tape, drain);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tape: report ?? null }));
  };

  /** `GET /@/orphans` lists the orphan tapes, `DELETE /@/orphans` deletes them; `POST /@/tests` claims tests. */
  const ownApi = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refused = hostRefusal(req.headers, { own, who: "one of tapedeck's own names" });
    if (refused !== undefined) {
      req.resume();
      throw refused;
    }
    let answer: unknown;
    if (TESTS.test(req.url ?? '')) {
      if (req.method !== 'POST') throw notAllowed(req, 'POST');
      const parsed = ClaimSchema.safeParse(await readJson(req));
      if (!parsed.success)
        throw new TapedeckError('BAD_ARGS', 'POST /@/tests takes {"tests": [{"file": FILE, "names": [SUITE..., TEST]}]}', { status: 400 });
      answer = { tapes: testTapes.claim(parsed.data.tests) };
    } else {
      req.resume();
      if (req.method === 'GET') answer = { orphans: await orphans() };
      else if (req.method === 'DELETE') answer = await prune();
      else throw notAllowed(req, 'GET, DELETE');
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  };

  const request = (req: IncomingMessage, res: ServerResponse): void => {
    const toSelf = forward.targetOf(req) === undefined;
    const url = req.url ?? '';
    const work =
      toSelf && req.method === 'DELETE' && CLOSE_TAPE.test(url)
        ? closeTape(req, res)
        : toSelf && req.method === 'GET' && TEST_TAPE.test(url)
          ? answerTestTape(req, res)
          : toSelf && (ORPHANS.test(url) || TESTS.test(url))
            ? ownApi(req, res)
            : route(req).then((front) => front.request(req, res));
    work.then(
      () => undefined,
      (err: unknown) => {
        req.resume();
        const known = asKnown(err, log);
        sendError(res, httpError(known, detectLlmApi('', pathOf(req), req.method ?? 'GET')));
      },
    );
  };

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    route(req).then(
      (front) => front.upgrade(req, socket, head),
      (err: unknown) => {
        const known = asKnown(err, log);
        refuseRaw(socket, httpError(known, detectLlmApi('', pathOf(req), 'GET')));
      },
    );
  };
  return { request, upgrade };
}

function notAllowed(req: IncomingMessage, allow: string): TapedeckError {
  return new TapedeckError('METHOD_NOT_ALLOWED', `${req.method ?? ''} ${pathOf(req)}: allowed ${allow}`, { headers: { allow } });
}

/** A JSON body, bounded (a claim is the one body tapedeck's own API takes). */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_CLAIM_BYTES) throw new TapedeckError('BAD_REQUEST', `body over ${MAX_CLAIM_BYTES} bytes`, { status: 413 });
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new TapedeckError('PARSE_ERROR', 'the body is not JSON');
  }
}

function asKnown(err: unknown, log: Logger): TapedeckError {
  if (isTapedeckError(err)) return err;
  log.error({ err: (err as Error).message, stack: (err as Error).stack }, 'could not choose a tape');
  return new TapedeckError('INTERNAL', `tapedeck internal error: ${(err as Error).message}`, { cause: err });
}

function pathOf(req: IncomingMessage): string {
  return (req.url ?? '/').replace(/^https?:\/\/[^/?#]*/i, '').split('?')[0] ?? '/';
}
