/**
 * The listeners of `tapedeck serve` (`serve.ts`): a request to tapedeck's own API (a test's tape, closing a tape, the
 * orphans, a claim of tests) is answered here; any other has its test's tape chosen (`tape-name.ts`) and opened
 * (`tape-router.ts`) and goes to that tape's session's listeners, built once per session. Its own file so that
 * `serve.ts` is the server's life (start, report, stop) and this the path of one request.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { isTapedeckError, TapedeckError } from '../errors.js';
import { TestIdSchema } from '../tape/test-tape-name.js';
import type { PrunedOrphans } from './orphan-tapes.js';
import type { Logger } from '../log.js';
import type { OwnHosts } from '../own-hosts.js';
import { detectLlmApi } from '../providers/detect.js';
import { httpError } from '../providers/errors.js';
import type { ForwardProxy } from '../front/forward-proxy.js';
import { hostRefusal } from '../host-guard.js';
import { createRequestListener } from '../front/http-app.js';
import type { Front } from '../front/listen.js';
import type { ProxySession } from '../front/proxy-session.js';
import { chooseTape, TAPE_HEADER } from './tape-name.js';
import type { TapeRouter } from './tape-router.js';
import { refuseRaw } from '../http/raw-answer.js';
import type { TestTapes } from './test-tapes.js';
import { sendError } from '../http/sink.js';
import { createUpgradeListener } from '../front/ws-upgrade.js';

export interface FrontOptions {
  router: TapeRouter;
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
export function createServeFront(opts: FrontOptions): Front {
  // Each session's listeners, built once: its routes, its handlers, its tape's clock.
  const state: FrontState = { ...opts, fronts: new WeakMap<ProxySession, Front>() };
  return {
    request: (req, res) => serveRequest(state, req, res),
    upgrade(req, socket, head) {
      routeToTape(state, req).then(
        (front) => front.upgrade(req, socket, head),
        (err: unknown) => {
          const known = asKnown(err, opts.log);
          refuseRaw(socket, httpError(known, detectLlmApi('', pathOf(req), 'GET')));
        },
      );
    },
  };
}

/** The serve front's options, and each session's listeners (built on its first request). */
interface FrontState extends FrontOptions {
  readonly fronts: WeakMap<ProxySession, Front>;
}

/** A request: to tapedeck's own API (a test's tape, closing a tape, orphans, claims), else to its test's tape. */
function serveRequest(state: FrontState, req: IncomingMessage, res: ServerResponse): void {
  const toSelf = state.forward.targetOf(req) === undefined;
  const url = req.url ?? '';
  const work =
    toSelf && req.method === 'DELETE' && CLOSE_TAPE.test(url)
      ? closeTape(state, req, res)
      : toSelf && req.method === 'GET' && TEST_TAPE.test(url)
        ? answerTestTape(state, req, res)
        : toSelf && (ORPHANS.test(url) || TESTS.test(url))
          ? ownApi(state, req, res)
          : routeToTape(state, req).then((front) => front.request(req, res));
  work.then(
    () => undefined,
    (err: unknown) => {
      req.resume();
      const known = asKnown(err, state.log);
      sendError(res, httpError(known, detectLlmApi('', pathOf(req), req.method ?? 'GET')));
    },
  );
}

/** The listeners of a tape's session, built on first use. */
function frontOf(state: FrontState, session: ProxySession): Front {
  let front = state.fronts.get(session);
  if (front === undefined) {
    const { log, own, forward } = state;
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
    state.fronts.set(session, front);
  }
  return front;
}

/** The tape of `req` and its session; the URL loses its `/@NAME` prefix and the headers the tape header. */
async function routeToTape(state: FrontState, req: IncomingMessage): Promise<Front> {
  const { forward, own, router, testTapes } = state;
  const target = forward.targetOf(req);
  if (target === undefined) {
    // Addressed to tapedeck by name: the Host guard first, so that no page a browser visits can open a tape.
    const refused = hostRefusal(req.headers, { own });
    if (refused !== undefined) throw refused;
  }
  const choice = chooseTape(req, target === undefined || target.self, state.defaultTape);
  req.url = choice.url;
  delete req.headers[TAPE_HEADER];
  const { session } = await router.open(choice.tape).catch((err: unknown) => {
    const earlier = testTapes.earlierOf(choice.tape);
    if (earlier === undefined || !isTapedeckError(err) || err.code !== 'TAPE_NOT_FOUND') throw err;
    throw new TapedeckError('TAPE_NOT_FOUND', notFoundWithEarlier(choice.tape, earlier), { details: { tape: choice.tape, earlier } });
  });
  return frontOf(state, session);
}

/** The tape of the test `GET /@?file=...&name=...` names, as JSON: `{"tape": NAME, "earlier"?: NAME}`. */
async function answerTestTape(state: FrontState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  req.resume();
  const refused = hostRefusal(req.headers, { own: state.own, who: "one of tapedeck's own names" });
  if (refused !== undefined) throw refused;
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const answer = await state.testTapes.tapeFor(query);
  // A tape too old to replay (--max-age) fails its test at once, with the line that says how to refresh it.
  await state.router.checkAge(answer.tape);
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
}

/** Close the tape `DELETE /@NAME` names; answers what it did (`{"tape": null}` when it was not open). */
async function closeTape(state: FrontState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  req.resume();
  const refused = hostRefusal(req.headers, { own: state.own, who: "one of tapedeck's own names" });
  if (refused !== undefined) throw refused;
  const { tape } = chooseTape(req, true);
  const report = await state.router.release(tape, state.drain);
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tape: report ?? null }));
}

/** `GET /@/orphans` lists the orphan tapes, `DELETE /@/orphans` deletes them; `POST /@/tests` claims tests. */
async function ownApi(state: FrontState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const refused = hostRefusal(req.headers, { own: state.own, who: "one of tapedeck's own names" });
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
    answer = { tapes: state.testTapes.claim(parsed.data.tests) };
  } else {
    req.resume();
    if (req.method === 'GET') answer = { orphans: await state.orphans() };
    else if (req.method === 'DELETE') answer = await state.prune();
    else throw notAllowed(req, 'GET, DELETE');
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
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

/** The "not found" of a test's tape when the tape the earlier naming rule gave the test exists. */
export function notFoundWithEarlier(tape: string, earlier: string): string {
  return (
    `no tape "${tape}": this test's recording is probably the tape "${earlier}", named by the earlier naming rule ` +
    `(which several tests could share): rename it to "${tape}" if it holds this test alone, else record the test again`
  );
}
