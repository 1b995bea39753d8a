/**
 * HTTP mocks (`replay --mock FILE`, entries with `route:`): a request on a mocked route gets the mock's answer
 * instead of the tape's, recorded on the replay tape with `match.kind: "mock"`.
 */
import { findHttpMock, type Mocks } from '../../replay/mocks.js';
import { elapsedSince } from '../../engine/call.js';
import { exchangeRecord } from '../../engine/record.js';
import { httpCall } from '../../http/http-call.js';
import { sendBody } from '../../http/sink-send.js';
import type { ReplayResponder } from '../../http/types.js';

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
      const call = httpCall(req);
      const body =
        mock.body === undefined
          ? ({ kind: 'empty' } as const)
          : json
            ? ({ kind: 'json', json: mock.body } as const)
            : ({ kind: 'text', text } as const);
      ctx.out.write(
        exchangeRecord(
          call,
          { response: { status: mock.status, headers, body }, timing: { durationMs: elapsedSince(call) } },
          { match: { kind: 'mock', reason } },
        ),
      );
      sendBody(sink, mock.status, headers, text);
      return true;
    },
  };
}
