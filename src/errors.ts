/**
 * One error type with a stable code. Library modules throw it (bad input, a tape that cannot be read) or hand it
 * back as a value (a replay miss, a blocked side effect, no route, an upstream that failed), and one renderer
 * (`providers/errors.ts`) turns it into the answer a client expects: the API's own error shape over HTTP, a JSON-RPC
 * error or tool result over MCP. Each code says its HTTP status, the error `type` clients see, and its JSON-RPC code.
 */

/** JSON-RPC 2.0 and MCP error codes (the MCP SDK's `ErrorCode` values, kept here so this module imports nothing). */
const RPC = {
  parse: -32700,
  invalidRequest: -32600,
  invalidParams: -32602,
  internal: -32603,
  server: -32000,
  sessionNotFound: -32001,
} as const;

const CODES = {
  /** A caller passed something unusable (a bad tape name, a bad number). */
  BAD_ARGS: { status: 400, type: 'tapedeck_bad_args', rpc: RPC.invalidParams },
  /** A config, price or side-effects file that cannot be read or is invalid. */
  BAD_CONFIG: { status: 500, type: 'tapedeck_bad_config', rpc: RPC.internal },
  TAPE_NOT_FOUND: { status: 404, type: 'tapedeck_tape_not_found', rpc: RPC.internal },
  /** A tape whose header (or a side file) cannot be used. */
  TAPE_CORRUPT: { status: 500, type: 'tapedeck_tape_corrupt', rpc: RPC.internal },
  /** Recording to a tape that exists, without saying to overwrite or append. */
  TAPE_EXISTS: { status: 409, type: 'tapedeck_tape_exists', rpc: RPC.internal },
  /** serve --max-age, replay mode: the tape was recorded longer ago than allowed (re-record it). */
  TAPE_TOO_OLD: { status: 409, type: 'tapedeck_tape_too_old', rpc: RPC.internal },
  /** Writing to a tape after it was closed. */
  TAPE_CLOSED: { status: 500, type: 'tapedeck_tape_closed', rpc: RPC.internal },
  /** Another process is writing the tape (its lock file names the pid). */
  TAPE_LOCKED: { status: 409, type: 'tapedeck_tape_locked', rpc: RPC.internal },
  /** The tape cannot be written (disk full, I/O error): what was answered would not be on it. */
  TAPE_WRITE_FAILED: { status: 503, type: 'tapedeck_tape_write_failed', rpc: RPC.internal },
  /** A tape in a format this tapedeck cannot read (written by a newer one). */
  TAPE_FORMAT_UNSUPPORTED: { status: 500, type: 'tapedeck_tape_format_unsupported', rpc: RPC.internal },
  /** Replay: no recording answers the request. */
  TAPE_MISS: { status: 404, type: 'tapedeck_miss', rpc: RPC.internal },
  /** Replay: an unrecorded call of a side-effect tool, never forwarded. */
  SIDE_EFFECT_BLOCKED: { status: 404, type: 'tapedeck_side_effect_blocked', rpc: RPC.internal },
  /** A side-effects file nobody has reviewed (`done` is not true). */
  SIDE_EFFECTS_NOT_REVIEWED: { status: 500, type: 'tapedeck_side_effects_not_reviewed', rpc: RPC.internal },
  /** No route prefix matches the request path. */
  NO_ROUTE: { status: 404, type: 'tapedeck_no_route', rpc: RPC.internal },
  /** The upstream could not be reached, or (recorded) it gave no answer. */
  UPSTREAM_ERROR: { status: 502, type: 'tapedeck_upstream_error', rpc: RPC.internal },
  /** Replay: a request that had to go live could not (no server, no session). */
  LIVE_UNAVAILABLE: { status: 502, type: 'tapedeck_live_unavailable', rpc: RPC.internal },
  /** A message that is not JSON. */
  PARSE_ERROR: { status: 400, type: 'tapedeck_parse_error', rpc: RPC.parse },
  /** MCP stdio: a line longer than the line limit (10 MB unless configured), dropped unread. */
  LINE_TOO_LONG: { status: 413, type: 'tapedeck_line_too_long', rpc: RPC.parse },
  /** A message that is JSON but not a valid request. */
  BAD_REQUEST: { status: 400, type: 'tapedeck_bad_request', rpc: RPC.invalidRequest },
  /** MCP: a sessionful server's request without `Mcp-Session-Id`. */
  SESSION_REQUIRED: { status: 400, type: 'tapedeck_session_required', rpc: RPC.server },
  /** MCP: an unknown or ended session (the client must initialize again). */
  SESSION_NOT_FOUND: { status: 404, type: 'tapedeck_session_not_found', rpc: RPC.sessionNotFound },
  METHOD_NOT_ALLOWED: { status: 405, type: 'tapedeck_method_not_allowed', rpc: RPC.server },
  /** The port to listen on is taken. */
  PORT_IN_USE: { status: 500, type: 'tapedeck_port_in_use', rpc: RPC.internal },
  EMBEDDINGS_FAILED: { status: 502, type: 'tapedeck_embeddings_failed', rpc: RPC.internal },
  /** A page or file of tapedeck's own HTTP API (the viewer) that does not exist. */
  NOT_FOUND: { status: 404, type: 'tapedeck_not_found', rpc: RPC.internal },
  /** A request the proxy or the viewer refuses (a Host or Origin that is not its own: DNS rebinding). */
  FORBIDDEN: { status: 403, type: 'tapedeck_forbidden', rpc: RPC.internal },
  /** An export that could not be written or pushed. */
  EXPORT_FAILED: { status: 502, type: 'tapedeck_export_failed', rpc: RPC.internal },
  /** The command to run under tapedeck could not be started (not found, not executable). */
  COMMAND_FAILED: { status: 500, type: 'tapedeck_command_failed', rpc: RPC.internal },
  /** Modified replay: a model name no provider family of the price table claims, or more than one does. */
  UNKNOWN_MODEL_PROVIDER: { status: 400, type: 'tapedeck_unknown_model_provider', rpc: RPC.invalidParams },
  /** The no-egress sandbox cannot run on this machine (not Linux, no user namespaces, no unshare or ip). */
  SANDBOX_UNAVAILABLE: { status: 500, type: 'tapedeck_sandbox_unavailable', rpc: RPC.internal },
  /** A shared tape store (PostgreSQL) that cannot be reached or refused what was asked. */
  STORE_UNAVAILABLE: { status: 503, type: 'tapedeck_store_unavailable', rpc: RPC.internal },
  /** A tape store whose schema was written by a newer tapedeck. */
  STORE_SCHEMA_UNSUPPORTED: { status: 500, type: 'tapedeck_store_schema_unsupported', rpc: RPC.internal },
  /** drift: a key the calls to send need is not in the environment (a tape holds no keys). */
  MISSING_CREDENTIALS: { status: 401, type: 'tapedeck_missing_credentials', rpc: RPC.internal },
  /** serve: a request that names no tape (no `/@NAME/` path prefix, no `x-tapedeck-tape` header, no default tape). */
  NO_TAPE: { status: 400, type: 'tapedeck_no_tape', rpc: RPC.invalidRequest },
  /** A bug: something tapedeck did not expect. */
  INTERNAL: { status: 500, type: 'tapedeck_internal_error', rpc: RPC.internal },
} as const satisfies Record<string, { status: number; type: string; rpc: number }>;

export type ErrorCode = keyof typeof CODES;

export interface ErrorOptions {
  /** HTTP status, when it is not the code's own. */
  status?: number;
  /** What a client may want to act on (the closest recordings of a miss, the tape, ...). Sent as `tapedeck`. */
  details?: Record<string, unknown>;
  /** HTTP headers that belong with this answer (`allow` for 405). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class TapedeckError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, opts: ErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'TapedeckError';
    this.code = code;
    this.status = opts.status ?? CODES[code].status;
    this.details = opts.details;
    this.headers = opts.headers;
  }

  /** The error `type` a client sees (`tapedeck_miss`, `tapedeck_no_route`, ...). */
  get type(): string {
    return CODES[this.code].type;
  }

  /** The JSON-RPC error code it answers with. */
  get rpcCode(): number {
    return CODES[this.code].rpc;
  }
}

export function isTapedeckError(err: unknown): err is TapedeckError {
  return err instanceof TapedeckError;
}
