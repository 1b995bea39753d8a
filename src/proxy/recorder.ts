import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Logger } from '../log.js';
import { rewriteLegacyEndpoint } from '../mcp/endpoint-rewrite.js';
import type { TapeWriter } from '../tape/tape-writer.js';
import { describeExchange } from './describe-exchange.js';
import { forwardAndCapture } from './forward.js';
import { nodeSink } from './sink.js';
import type { ProxyRequest } from './types.js';

export interface RecorderOptions {
  writer: TapeWriter;
  dispatcher: Dispatcher;
  log: Logger;
}

export interface Recorder {
  handle(req: ProxyRequest, res: ServerResponse): Promise<void>;
  /** Resolves when every exchange that has started is written. */
  drain(): Promise<void>;
}

/** Record mode: forward every request, stream the answer back as it arrives, write the exchange when it ends. */
export function createRecorder(opts: RecorderOptions): Recorder {
  const pending = new Set<Promise<unknown>>();
  return {
    async handle(req, res) {
      // MCP legacy HTTP+SSE: the client must POST back through the route prefix (a no-op for anything but a GET event stream).
      const written = forwardAndCapture(req, rewriteLegacyEndpoint(req, nodeSink(res)), { dispatcher: opts.dispatcher })
        .then((ex) => opts.writer.append(describeExchange(ex, opts.log)))
        .then(
          (ex) => opts.log.debug({ id: ex.id, route: ex.route, path: ex.request.path, status: ex.response?.status }, 'recorded'),
          (err: unknown) =>
            opts.log.error({ err: (err as Error).message, route: req.route.prefix, path: req.path }, 'could not write exchange'),
        );
      pending.add(written);
      await written.finally(() => pending.delete(written));
    },
    async drain() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
