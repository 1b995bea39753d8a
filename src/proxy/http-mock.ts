/**
 * HTTP mocks (`replay --mock FILE`, entries with `route:`): a request on a mocked route gets the mock's answer
 * instead of the tape's, recorded on the replay tape with `match.kind: "mock"`.
 */
import { findHttpMock, type Mocks } from '../replay/mocks.js';
import { round } from '../tape/sse.js';
import { incomingRecord } from './replay-record.js';
import { sendBody } from './sink-send.js';
import type { ReplayResponder } from './types.js';

export function createHttpMockResponder(mocks: Mocks): ReplayResponder {
  return {
    name: 'http-mock',
    async handle(req, ctx, sink) {
      const mock = findHttpMock(mocks, req.route.prefix, req.method, req.path);
      if (mock === undefined) return false;
      const json = mock.body !== undefined && typeof mock.body !== 'string';
      const headers: Record<string, string> = {
        ...(mock.body === undefined ? {} : { 'content-type': json ? 'application/json' : 'text/plain' }),
        ...mock.headers,
        'x-tapedeck-match': 'mock',
      };
      const text = mock.body === undefined ? '' : json ? JSON.stringify(mock.body) : String(mock.body);
      const reason = `answered by a mock of ${mock.method ?? ''}${mock.method ? ' ' : ''}${mock.route}${mock.path ?? ''} from ${mocks.file}`;
      ctx.out.write({
        ...incomingRecord(req),
        response: {
          status: mock.status,
          headers,
          body: mock.body === undefined ? { kind: 'empty' } : json ? { kind: 'json', json: mock.body } : { kind: 'text', text },
        },
        timing: { durationMs: round(performance.now() - req.t0) },
        match: { kind: 'mock', reason },
      });
      sendBody(sink, mock.status, headers, text);
      return true;
    },
  };
}
