/**
 * The viewer's HTTP app (hono): the browser app's files, and a JSON API that pages the timeline so a 10,000-step
 * tape opens at once (rows without bodies; a step in full only when it is opened). Every request passes the
 * loopback guard first. Tape names travel in the query string (`?name=a/b`), since they may contain `/`.
 */
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { isTapedeckError, TapedeckError } from '../errors.js';
import type { Logger } from '../log.js';
import { errorResponse, httpError } from '../providers/errors.js';
import { compareTapes } from './compare.js';
import type { LiveHub } from './live-hub.js';
import { loopbackGuard } from './loopback-guard.js';
import { debriefOf, type CostFn } from './model.js';
import { stepDetail } from './step-detail.js';
import type { OpenTape, OpenTapes } from './open-tapes.js';
import { overviewOf } from './timeline-items.js';
import { loadWebAssets, type WebAsset } from './web-assets.js';

/** Rows per page at most. */
export const MAX_PAGE = 1000;

export interface ViewAppOptions {
  /** The tapes, over the store they live in. */
  tapes: OpenTapes;
  costOf: CostFn;
  log: Logger;
  /** The listening port, for the Host check (a function: known only once listening with port 0). */
  port: () => number;
  boundAddress?: string;
  live?: LiveHub;
  /** The browser app's files (default: the `web/` folder beside this module). */
  assets?: Map<string, WebAsset>;
}

export interface ViewApp {
  app: Hono;
  /** End every open live stream (the server is stopping). */
  closeStreams(): void;
}

const NameQuery = z.object({ name: z.string().min(1) });
const RowsQuery = NameQuery.extend({
  from: z.coerce.number().int().min(0).default(0),
  count: z.coerce.number().int().min(1).max(MAX_PAGE).default(200),
});
const StepQuery = NameQuery.extend({ i: z.coerce.number().int().min(0).optional(), id: z.string().optional() });
const CompareQuery = z.object({ a: z.string().min(1), b: z.string().min(1) });

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

export function createViewApp(opts: ViewAppOptions): ViewApp {
  const { tapes: store, costOf } = opts;
  const assets = opts.assets ?? loadWebAssets();
  const streams = new Set<() => void>();
  const app = new Hono();

  // Security headers on every answer, the guard's refusals included.
  app.use(async (c, next) => {
    await next();
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(k, v);
    if (c.req.path.startsWith('/api/')) c.res.headers.set('cache-control', 'no-store');
  });
  app.use(loopbackGuard({ port: opts.port, ...(opts.boundAddress === undefined ? {} : { boundAddress: opts.boundAddress }) }));

  const asset = (c: Context, name: string): Response => {
    const a = assets.get(name);
    if (!a) throw new TapedeckError('NOT_FOUND', `no file ${name}`);
    return c.body(new Uint8Array(a.body), 200, { 'content-type': a.type, 'cache-control': 'no-cache' });
  };
  app.get('/', (c) => asset(c, 'index.html'));
  app.get('/assets/:file', (c) => asset(c, c.req.param('file')));
  app.get('/favicon.ico', (c) => c.body(null, 204));

  app.get('/api/tapes', async (c) => c.json({ dir: store.location, tapes: await store.list() }));

  app.get('/api/tape', async (c) => {
    const { name } = parse(NameQuery, c);
    const t = await store.open(name);
    let llm = 0;
    for (const it of t.items) if (it.lane === 'llm') llm++;
    return c.json({
      name: t.name,
      header: t.header,
      version: t.version,
      total: t.items.length,
      spanMs: t.spanMs,
      lanes: { llm, tool: t.items.length - llm },
      errors: t.items.filter((it) => it.error !== null).length,
      problems: t.problems,
    });
  });

  app.get('/api/rows', async (c) => {
    const q = parse(RowsQuery, c);
    const t = await store.open(q.name);
    return c.json({ version: t.version, total: t.items.length, from: q.from, items: t.items.slice(q.from, q.from + q.count) });
  });

  app.get('/api/overview', async (c) => {
    const t = await store.open(parse(NameQuery, c).name);
    return c.json({ version: t.version, ...overviewOf(t.items) });
  });

  app.get('/api/step', async (c) => {
    const q = parse(StepQuery, c);
    const t = await store.open(q.name);
    const index = stepIndex(t, q.i, q.id);
    const originalName = t.header.replayOf?.tape;
    const original = originalName === undefined ? undefined : await store.open(originalName).catch(() => undefined);
    return c.json(stepDetail(t, index, original));
  });

  app.get('/api/raw', async (c) => {
    const q = parse(StepQuery, c);
    const t = await store.open(q.name);
    return c.json((t.steps[stepIndex(t, q.i, q.id)] as OpenTape['steps'][number]).exchange);
  });

  app.get('/api/debrief', async (c) => {
    const t = await store.open(parse(NameQuery, c).name);
    return c.json(debriefOf(t.steps));
  });

  app.get('/api/compare', async (c) => {
    const q = parse(CompareQuery, c);
    const [a, b] = await Promise.all([store.open(q.a), store.open(q.b)]);
    return c.json(compareTapes(a, b, costOf));
  });

  app.get('/api/live', async (c) => {
    const { name } = parse(NameQuery, c);
    const live = opts.live;
    if (!live) throw new TapedeckError('NOT_FOUND', 'this viewer has no live updates');
    await store.open(name); // a missing tape is a 404 now, not an empty stream
    return streamSSE(c, async (stream) => {
      let end: () => void = () => undefined;
      const ended = new Promise<void>((resolve) => (end = resolve));
      streams.add(end);
      const unsubscribe = live.subscribe(name, (u) => void stream.writeSSE({ event: 'update', data: JSON.stringify(u) }).catch(end));
      stream.onAbort(end);
      await ended;
      unsubscribe();
      streams.delete(end);
    });
  });

  // Every error answer is tapedeck's own shape, `{error:{code,type,message}}`, rendered in one place.
  app.notFound((c) => errorResponse(httpError(new TapedeckError('NOT_FOUND', `no such page: ${c.req.path}`))));
  app.onError((err, c) => {
    if (isTapedeckError(err)) return errorResponse(httpError(err));
    // The cause goes to the log; the page gets no file-system path or stack from it.
    opts.log.error({ err: err.message, path: c.req.path }, 'viewer request failed');
    const code = (err as NodeJS.ErrnoException).code;
    const message = `the viewer could not answer this request${code ? ` (${code})` : ''}: see its log`;
    return errorResponse(httpError(new TapedeckError('INTERNAL', message)));
  });

  return {
    app,
    closeStreams() {
      for (const end of streams) end();
      streams.clear();
    },
  };
}

/** The query string checked against its schema; a bad one is a 400 that names the parameter. */
function parse<T>(schema: z.ZodType<T>, c: Context): T {
  const r = schema.safeParse(c.req.query());
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new TapedeckError('BAD_ARGS', `bad query parameter ${issue?.path.join('.') || ''}: ${issue?.message ?? 'invalid'}`, {
    status: 400,
  });
}

/** A step by timeline position or by exchange id. */
function stepIndex(t: OpenTape, i: number | undefined, id: string | undefined): number {
  const index = id !== undefined ? t.byId.get(id) : i;
  if (index === undefined || index >= t.items.length)
    throw new TapedeckError(
      'BAD_ARGS',
      `no step ${id !== undefined ? `with id ${id}` : (i ?? '(none given)')} on "${t.name}" (${t.items.length} steps)`,
      {
        status: 404,
      },
    );
  return index;
}
