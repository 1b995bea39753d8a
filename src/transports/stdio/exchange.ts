/**
 * How an MCP stdio message is written as an `Exchange`, so stdio and HTTP tapes share one format (and one tape can
 * hold both). Conventions:
 * - `transport: 'stdio'`, `route` = the server name (`--name`, default derived from the command), `upstream` = the command line.
 * - A client message is `POST /` with the JSON-RPC message as its JSON body and no headers.
 * - The server's answer is `response.body` (status 200); notifications and server requests that arrived while the
 *   request was open are `response.events` (`event: message`, `data` = the JSON message, `offsetMs` from the request
 *   start), in arrival order: the same shape as a Streamable HTTP POST answered with SSE.
 * - A client notification or response gets `status: 202` and no body (as over HTTP).
 * - A server message with no open request is `GET /` with the message as its only event (a server-to-client stream).
 * - A request the server never answered (it died) carries `error: {code: 'SERVER_EXITED', phase: 'stream'}`.
 */
import { callOf, type Arrival, type Call } from '../../engine/call.js';
import type { Answer } from '../../engine/record.js';
import type { TimedMessage } from '../../providers/mcp.js';
import type { IncomingRequest } from '../../replay/matcher.js';
import type { Body, RequestRecord, SseEvent } from '../../tape/schema.js';
import { roundMs } from '../../tape/timing.js';

export function stdioRequest(message: unknown, method: 'POST' | 'GET' = 'POST'): RequestRecord {
  return { method, path: '/', query: [], headers: {}, body: method === 'GET' ? { kind: 'empty' } : { kind: 'json', json: message } };
}

/** Where a stdio call came from: the server's name on the tape, and the command line that runs it. */
export interface StdioRoute {
  name: string;
  upstream?: string | undefined;
}

/**
 * A client message as a call (`engine/call.ts`): `POST /` with the message as its body. `body` instead: a line that is
 * not JSON-RPC, as the text it was (or empty). `GET /`: a server-to-client stream of the server's own.
 */
export function stdioCall(route: StdioRoute, at: Arrival, message: unknown, opts: { method?: 'POST' | 'GET'; body?: Body } = {}): Call {
  const request = stdioRequest(message, opts.method);
  if (opts.body !== undefined) request.body = opts.body;
  return callOf('stdio', route.name, route.upstream, at, request);
}

/**
 * What a message got, as the tape keeps it over stdio: the answer (`final`) as the body, status 200, and what came
 * before it as events.
 */
export function stdioAnswer(before: readonly TimedMessage[], final: TimedMessage | undefined, timing: Answer['timing']): Answer {
  const response: NonNullable<Answer['response']> = { status: 200, headers: {} };
  if (final !== undefined) response.body = { kind: 'json', json: final.message };
  if (before.length > 0) response.events = before.map((m) => stdioEvent(m.message, m.offsetMs));
  return { response, timing };
}

/** A notification, or the client's own answer to a server request: 202, nothing back, over stdio as over HTTP. */
export function acceptedAnswer(): Answer {
  return { response: { status: 202, headers: {}, body: { kind: 'empty' } }, timing: { durationMs: 0 } };
}

export function stdioEvent(message: unknown, offsetMs: number): SseEvent {
  return { offsetMs: roundMs(offsetMs), event: 'message', data: JSON.stringify(message) };
}

/** The matcher's view of an incoming stdio message. */
export function stdioIncoming(route: string, message: unknown): IncomingRequest {
  return { route, request: stdioRequest(message), transport: 'stdio' };
}

const INTERPRETERS = new Set([
  'node',
  'npx',
  'bun',
  'bunx',
  'deno',
  'python',
  'python3',
  'uv',
  'uvx',
  'pipx',
  'docker',
  'tsx',
  'pnpm',
  'yarn',
]);

/**
 * A stable server name for the route: the package or script the command runs, without paths (temp dirs and
 * install locations change between runs; the name must not). `--name` overrides it.
 */
export function defaultServerName(command: string, args: readonly string[]): string {
  const base = (p: string): string =>
    p
      .split(/[\\/]/)
      .filter((s) => s !== '')
      .at(-1) ?? p;
  let target = command;
  if (INTERPRETERS.has(base(command).replace(/\.exe$/, ''))) {
    target = args.find((a) => !a.startsWith('-') && !['run', 'exec', 'dlx', 'x'].includes(a)) ?? command;
  }
  // `.../node_modules/@scope/pkg/dist/index.js` -> `@scope/pkg`
  const nm = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(target);
  if (nm?.[1]) return `stdio:${nm[1].replace(/\\/g, '/')}`;
  if (target.startsWith('@') || !/[\\/]/.test(target)) return `stdio:${target.replace(/@[\d^~].*$/, '')}`;
  return `stdio:${base(target).replace(/\.(m?js|cjs|ts|py)$/, '')}`;
}
