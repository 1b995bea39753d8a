import { describe, expect, it } from 'vitest';
import { OpenRequests, type OpenRequest } from '../../../src/transports/stdio/open-requests.js';

const req = (id: number, token?: number): OpenRequest => ({
  message: { jsonrpc: '2.0', id, method: 'tools/call', params: token === undefined ? {} : { _meta: { progressToken: token } } },
  t0: 0,
  events: [],
});

describe('OpenRequests', () => {
  it('an answer closes its request; progress goes to the request with its token, anything else to the latest open one', () => {
    const open = new OpenRequests();
    const a = req(1, 100);
    const b = req(2);
    open.add(1, a);
    open.add(2, b);
    expect(open.route({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 100, progress: 1 } }, 5)).toEqual({
      joined: a,
    });
    expect(open.route({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info' } }, 6)).toEqual({ joined: b });
    expect(open.route({ jsonrpc: '2.0', id: 1, result: {} }, 7)).toEqual({ answered: a });
    expect(a.events.map((e) => e.offsetMs)).toEqual([5]);
    expect(a).toMatchObject({ firstEventMs: 5 });
    // A request of the server's own (method and id) is not an answer, even with an open request's id.
    expect(open.route({ jsonrpc: '2.0', id: 2, method: 'sampling/createMessage' }, 8)).toEqual({ joined: b });
    expect(open.drain()).toEqual([b]);
    expect(open.route({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })).toEqual({ orphan: true });
  });
});
