/** One error type with a stable code; errors that reach an HTTP client carry their status. */
export type ErrorCode =
  | 'BAD_ARGS'
  | 'BAD_CONFIG'
  | 'TAPE_NOT_FOUND'
  | 'TAPE_CORRUPT'
  | 'TAPE_EXISTS'
  | 'TAPE_MISS'
  | 'SIDE_EFFECT_BLOCKED'
  | 'SIDE_EFFECTS_NOT_REVIEWED'
  | 'NO_ROUTE'
  | 'UPSTREAM_ERROR'
  | 'BAD_REQUEST'
  | 'EMBEDDINGS_FAILED'
  /** The viewer refused a request: a Host or Origin that is not its own (DNS rebinding, cross-site). */
  | 'FORBIDDEN'
  /** An export could not be written or pushed (OTLP endpoint unreachable or refusing). */
  | 'EXPORT_FAILED';

export class TapedeckError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, opts: { status?: number; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'TapedeckError';
    this.code = code;
    this.status = opts.status ?? 500;
    this.details = opts.details;
  }
}

export function isTapedeckError(err: unknown): err is TapedeckError {
  return err instanceof TapedeckError;
}
