import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { rewriteLegacyEndpoint } from './legacy-endpoint.js';
import type { ExchangeLog } from './exchange-log.js';
import { forwardAndCapture } from './forward.js';
import { nodeSink } from './sink.js';
import type { ProxyRequest } from './types.js';

export interface RecorderOptions {
  out: ExchangeLog;
  dispatcher: Dispatcher;
}

export interface Recorder {
  handle(req: ProxyRequest, res: ServerResponse): Promise<void>;
}

/** Record mode: forward every request, stream the answer back as it arrives, write the exchange when it ends. */
export function createRecorder(opts: RecorderOptions): Recorder {
  return {
    async handle(req, res) {
      // MCP legacy HTTP+SSE: the client must POST back through the route prefix (a no-op for anything but a GET event stream).
      await opts.out.writeWhen(forwardAndCapture(req, rewriteLegacyEndpoint(req, nodeSink(res)), { dispatcher: opts.dispatcher }));
    },
  };
}
