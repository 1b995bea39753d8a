import { z } from 'zod';
import { TapedeckError } from '../errors.js';
import { shippedPlace, shippedText } from '../shipped.js';
import { PriceMapSchema } from './prices.js';
import { parseUserYaml, readUserFile } from './user-file.js';
import type { Route } from '../tape/schema.js';

const RoutesSchema = z.record(z.string().regex(/^\//, 'route prefixes start with "/"'), z.string().url());

const Threshold = z.number().min(0).max(1);

export const SemanticSchema = z
  .object({
    /** Normalised and similarity matching after an exact miss. */
    enabled: z.boolean().default(true),
    threshold: Threshold.default(0.85),
    /** Thresholds per route prefix and per MCP tool, over the default. */
    routes: z.record(z.string(), Threshold).default({}),
    tools: z.record(z.string(), Threshold).default({}),
    /** Embedding similarity through an OpenAI-compatible endpoint (off unless set). */
    embeddings: z
      .object({ url: z.string().url(), model: z.string().min(1), apiKeyEnv: z.string().optional(), threshold: Threshold.optional() })
      .strict()
      .optional(),
  })
  .strict();

export const ConfigSchema = z
  .object({
    dir: z.string().default('./tapes'),
    /** A shared tape store instead of the folder: `postgres://USER@HOST:PORT/DB[?namespace=NS]`. */
    store: z.string().min(1).optional(),
    /** Keeps teams or branches apart in one shared store (over the URL's `?namespace=`). */
    namespace: z.string().min(1).optional(),
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8787),
    routes: RoutesSchema.default({}),
    redact: z
      .object({
        headers: z.array(z.string()).default([]),
        query: z.array(z.string()).default([]),
        /** Extra body field names whose values are secrets (JSON at any depth, form fields, JSON inside strings). */
        fields: z.array(z.string().min(1)).default([]),
        /** Value rules (credential shapes such as `ghp_...`, `AKIA...`, JWTs) on or off. */
        values: z.boolean().default(true),
        /** Extra value rules: an id and a JavaScript regular expression (capture group 1, if any, is the secret). */
        rules: z
          .array(
            z
              .object({
                id: z.string().min(1),
                regex: z.string().min(1).refine(isRegex, { message: 'not a valid regular expression' }),
              })
              .strict(),
          )
          .default([]),
      })
      .strict()
      .prefault({}),
    match: z
      .object({
        ignoreFields: z.array(z.string()).default(['jsonrpc:id', 'params._meta', '_meta']),
        whenExhausted: z.enum(['repeat-last', 'miss']).default('repeat-last'),
        /** Semantic matching settings (see docs/matching.md). */
        semantic: SemanticSchema.prefault({}),
      })
      .strict()
      .prefault({}),
    /** Host names requests may address tapedeck by, besides loopback names and the bound address (`*`: any). */
    allowHosts: z.array(z.string().min(1)).default([]),
    /** Seconds: to connect to an upstream, from request to response head, between two body chunks, and for a stop. */
    timeouts: z
      .object({
        connect: z.number().positive().default(10),
        response: z.number().positive().default(300),
        idle: z.number().positive().default(120),
        shutdown: z.number().positive().default(5),
      })
      .strict()
      .prefault({}),
    /** Hosts (`name` or `name:port`) the forward proxy tunnels untouched: never recorded nor replayed (a local database). */
    passThrough: z.array(z.string().min(1)).default([]),
    /** Who may use tapedeck as a forward proxy: clients on this machine (default), or any (never an open proxy by accident). */
    forwardProxyClients: z.enum(['loopback', 'any']).default('loopback'),
    /** Once the tape being recorded cannot be written (disk full): refuse further requests with 503, or serve them unrecorded. */
    whenTapeFails: z.enum(['refuse', 'serve']).default('refuse'),
    /** Replay: send the `x-tapedeck-*` headers (how each answer matched) with every answer. */
    matchHeaders: z.boolean().default(true),
    /** Path to the side-effects file used by replay. */
    sideEffects: z.string().optional(),
    /** Prices merged over `config/prices.yaml`: a price file's path, or an inline map of model -> price. */
    prices: z.union([z.string(), PriceMapSchema]).optional(),
  })
  .strict();
export type Config = z.infer<typeof ConfigSchema>;

/** Flags and environment that override the files. */
export interface ConfigOverrides {
  /** A folder given now: the tapes are there, whatever store the files name. */
  dir?: string | undefined;
  /** A store URL given now (`--store`). */
  store?: string | undefined;
  namespace?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  allowHosts?: readonly string[] | undefined;
  /** Seconds, over the file's `timeouts`. */
  timeouts?: Partial<Record<'connect' | 'response' | 'idle' | 'shutdown', number>> | undefined;
  /** Routes as `PREFIX=URL`. */
  routes?: readonly string[] | undefined;
}

/** The built-in defaults (`config/default.yaml`, shipped with the code: src/shipped.ts). */
const DEFAULT_FILE = '../config/default.yaml';
const defaultSettings = (): Record<string, unknown> => configSettings(shippedText(DEFAULT_FILE), shippedPlace(DEFAULT_FILE));

/**
 * Load config: built-in defaults, then the given file, then `TAPEDECK_DIR` / `TAPEDECK_STORE`, then overrides (a
 * `--dir` given now wins over a store named by the files or the environment). Bad input throws BAD_CONFIG.
 */
export function loadConfig(file: string | undefined, overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const base = defaultSettings();
  const user = file === undefined ? {} : readConfigFile(file);
  const merged = { ...base, ...user, routes: { ...(base.routes as object | undefined), ...(user.routes as object | undefined) } };
  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TapedeckError(
      'BAD_CONFIG',
      `bad config${file ? ` in ${file}` : ''}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}`,
    );
  }
  const config = parsed.data;
  if (env.TAPEDECK_DIR) config.dir = env.TAPEDECK_DIR;
  if (env.TAPEDECK_STORE) config.store = env.TAPEDECK_STORE;
  if (overrides.dir !== undefined && overrides.store !== undefined)
    throw new TapedeckError('BAD_ARGS', '--dir and --store name two places for the tapes: give one');
  if (overrides.dir !== undefined) {
    config.dir = overrides.dir;
    delete config.store;
  }
  if (overrides.store !== undefined) config.store = overrides.store;
  if (overrides.namespace !== undefined) config.namespace = overrides.namespace;
  if (overrides.host !== undefined) config.host = overrides.host;
  if (overrides.port !== undefined) config.port = overrides.port;
  for (const [k, v] of Object.entries(overrides.timeouts ?? {})) if (v !== undefined) config.timeouts[k as keyof Config['timeouts']] = v;
  if (overrides.allowHosts !== undefined) config.allowHosts = [...config.allowHosts, ...overrides.allowHosts];
  for (const r of overrides.routes ?? []) {
    const { prefix, upstream } = parseRouteSpec(r);
    config.routes[prefix] = upstream;
  }
  return config;
}

/**
 * Routes the user chose (config file and route overrides) apart from the built-in defaults. Replay needs the
 * difference: a tape's recorded routes win over the defaults (a run recorded against a local server is replayed
 * against it), while routes the user names now win over the tape.
 */
export function routeSources(file: string | undefined, specs: readonly string[] = []): { defaults: Route[]; chosen: Route[] } {
  const toRoutes = (r: unknown): Route[] =>
    Object.entries(RoutesSchema.catch({}).parse(r ?? {})).map(([prefix, upstream]) => ({ prefix: normalizePrefix(prefix), upstream }));
  const defaults = toRoutes(defaultSettings().routes);
  const chosen = new Map((file === undefined ? [] : toRoutes(readConfigFile(file).routes)).map((r) => [r.prefix, r] as const));
  for (const spec of specs) {
    const r = parseRouteSpec(spec);
    chosen.set(r.prefix, r);
  }
  return { defaults, chosen: [...chosen.values()] };
}

/** A route written `PREFIX=URL` (a flag, an environment variable) -> route. */
export function parseRouteSpec(flag: string): Route {
  const eq = flag.indexOf('=');
  const prefix = eq === -1 ? '' : normalizePrefix(flag.slice(0, eq));
  const upstream = eq === -1 ? '' : flag.slice(eq + 1);
  if (eq === -1 || prefix === '' || !isHttpUrl(upstream)) {
    throw new TapedeckError('BAD_ARGS', `route must be PREFIX=URL, like /openai=https://api.openai.com (got "${flag}")`);
  }
  return { prefix, upstream };
}

export function routesOf(config: Config): Route[] {
  return Object.entries(config.routes).map(([prefix, upstream]) => ({ prefix: normalizePrefix(prefix), upstream }));
}

function normalizePrefix(p: string): string {
  const withSlash = p.startsWith('/') ? p : `/${p}`;
  return withSlash.length > 1 && withSlash.endsWith('/') ? withSlash.slice(0, -1) : withSlash;
}

function isRegex(s: string): boolean {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function readConfigFile(file: string): Record<string, unknown> {
  return configSettings(readUserFile(file, 'config file'), file);
}

/** A config file's settings, from its text (`file` names it in errors; `.json` is read as JSON). */
function configSettings(text: string, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = file.endsWith('.json') ? JSON.parse(text) : parseUserYaml(text, `config file ${file}`);
  } catch (err) {
    if (err instanceof TapedeckError) throw err;
    throw new TapedeckError(
      'BAD_CONFIG',
      `config file ${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new TapedeckError('BAD_CONFIG', `config file ${file} must hold a mapping of settings`);
  return value as Record<string, unknown>;
}
