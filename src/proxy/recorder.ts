import type { Cancel } from './cancel.js';
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { detectLlmApi } from '../providers/detect.js';
import { httpError } from '../providers/errors.js';
import { rewriteLegacyEndpoint } from './legacy-endpoint.js';
import type { ExchangeLog } from './exchange-log.js';
import { forwardAndCapture, type ForwardOptions } from './forward.js';
import { nodeSink, sendError } from './sink.js';
import type { ProxyRequest } from './types.js';
import type { BodySpill } from './body-spill.js';
import type { NewExchange } from '../tape/tape-writer.js';

/** What recording does once its tape can no longer be written (disk full): refuse traffic, or serve it unrecorded. */
export type TapeFailurePolicy = 'refuse' | 'serve';

export interface RecorderOptions {
  out: ExchangeLog;
  dispatcher: Dispatcher;
  /** Default `refuse`: a 503 saying the tape cannot be written, rather than answers that will not be on it. */
  onTapeFailure?: TapeFailurePolicy;
  /** Aborted when tapedeck stops: requests still waiting for their upstream end, written with the error. */
  stopping?: Cancel;
  /** Where a response body too large to hold goes as it streams. */
  spill?: BodySpill;
}

export interface Recorder {
  handle(req: ProxyRequest, res: ServerResponse): Promise<void>;
}

/**
 * Record mode: forward every request, stream the answer back as it arrives, and put the exchange on the tape
 * before the client has the end of the answer (so an answer a client has is on the tape, whatever happens next).
 */
export function createRecorder(opts: RecorderOptions): Recorder {
  const serveUnrecorded = opts.onTapeFailure === 'serve';
  // Serving unrecorded: the client gets its answer whether or not it reached the tape.
  const commit = serveUnrecorded ? (ex: NewExchange): Promise<boolean> => opts.out.commit(ex).then(() => true) : opts.out.commit;
  // The same for every request: made once.
  const forwarding: ForwardOptions = {
    dispatcher: opts.dispatcher,
    commit,
    ...(opts.stopping ? { stopping: opts.stopping } : {}),
    ...(opts.spill ? { spill: opts.spill } : {}),
  };
  return {
    handle(req, res) {
      const failed = opts.out.writer.failure;
      if (failed !== undefined && !serveUnrecorded) {
        sendError(res, httpError(failed, detectLlmApi(req.route.prefix, req.path, req.method, req.route.upstream)));
        return Promise.resolve();
      }
      // MCP legacy HTTP+SSE: the client must POST back through the route prefix (a no-op for anything but a GET event stream).
      const captured = forwardAndCapture(req, rewriteLegacyEndpoint(req, nodeSink(res)), forwarding);
      // From its start: shutdown waits for an exchange still streaming, whose commit comes only when it ends.
      opts.out.track(captured);
      return captured as Promise<unknown> as Promise<void>;
    },
  };
}
