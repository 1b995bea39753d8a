import { describe, expect, it } from 'vitest';
import { blockedCalls, runTrouble, upstreamFailures } from '../../src/inspect/run-trouble.js';
import { exchange } from './exchanges.js';

describe('what went wrong in a run', () => {
  const ok = exchange({ offsetMs: 0, llm: { model: 'gpt-4o', outputText: 'hi' } });
  const limited = exchange({
    offsetMs: 10,
    status: 429,
    response: { error: { message: 'Rate limit reached for gpt-4.1', type: 'requests', code: 'rate_limit_exceeded' } },
    llm: { model: 'gpt-4.1', errorType: 'requests' },
    match: { kind: 'live', reason: 'forwarded' },
  });
  const blocked = exchange({
    offsetMs: 20,
    mcp: { toolName: 'send_email', isError: true },
    match: { kind: 'blocked', reason: '"send_email" counts as a side effect' },
  });
  const refused = exchange({ offsetMs: 30, error: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED', phase: 'connect' } });
  const left = exchange({ offsetMs: 40, error: { code: 'CLIENT_CLOSED', message: 'the client went away', phase: 'stream' } });
  const recordedFailure = exchange({ offsetMs: 50, status: 500, match: { kind: 'exact', source: '000001' } });

  it('names each failed call by its step, with the error the API gave; a client that left is no failure', () => {
    expect(upstreamFailures([ok, limited, blocked, refused, left, recordedFailure])).toEqual([
      { step: 1, call: 'LLM gpt-4.1', what: 'HTTP 429 rate_limit_exceeded: Rate limit reached for gpt-4.1', fromTape: false },
      { step: 3, call: 'HTTP POST /v1/chat/completions', what: 'ECONNREFUSED: connect ECONNREFUSED', fromTape: false },
      { step: 5, call: 'HTTP POST /v1/chat/completions', what: 'HTTP 500', fromTape: true },
    ]);
    expect(blockedCalls([ok, limited, blocked])).toEqual([{ step: 2, tool: 'send_email', reason: '"send_email" counts as a side effect' }]);
  });

  it('sums it up in one line, or says nothing when nothing went wrong', () => {
    expect(runTrouble([ok, limited, blocked])).toBe(
      'the upstream answered HTTP 429 rate_limit_exceeded: Rate limit reached for gpt-4.1 to LLM gpt-4.1 at step 1; ' +
        '1 call(s) blocked as side effects: send_email at step 2',
    );
    expect(runTrouble([ok, recordedFailure])).toBe(
      'the recorded answer (served from the tape) was HTTP 500 to HTTP POST /v1/chat/completions at step 1',
    );
    expect(runTrouble([ok, left])).toBeUndefined();
  });
});
