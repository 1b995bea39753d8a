/**
 * HTTP mocks (`replay --mock FILE`, entries with `route:`): a request on a mocked route is decided as the mock's
 * answer instead of the tape's; the engine sends it and records it on the replay tape with `match.kind: "mock"`.
 */
import { findHttpMock, type Mocks } from '../../replay/mocks.js';
import type { ReplayResponder } from '../../http/types.js';

export function createHttpMockResponder(mocks: Mocks): ReplayResponder {
  return {
    name: 'http-mock',
    decide(req) {
      const mock = findHttpMock(mocks, req.route.prefix, req.method, req.path);
      if (mock === undefined) return Promise.resolve(undefined);
      const json = mock.body !== undefined && typeof mock.body !== 'string';
      const headers: Record<string, string> = {
        ...(mock.body === undefined ? {} : { 'content-type': json ? 'application/json' : 'text/plain' }),
        ...mock.headers,
        'x-tapedeck-match': 'mock',
      };
      const reason = `answered by a mock of ${mock.method ?? ''}${mock.method ? ' ' : ''}${mock.route}${mock.path ?? ''} from ${mocks.file}`;
      const answer =
        mock.body === undefined
          ? { status: mock.status, headers }
          : json
            ? { status: mock.status, headers, json: mock.body }
            : { status: mock.status, headers, body: String(mock.body) };
      return Promise.resolve({ answer, reason });
    },
  };
}
