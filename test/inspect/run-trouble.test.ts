import { describe, expect, it } from 'vitest';
import { blockedCalls, injectedFaults, missedCalls, runFaults, runTrouble, upstreamFailures } from '../../src/inspect/run-trouble.js';
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

  it('an injected fault is never an upstream failure: it is named as injected, by its rule', () => {
    const injected = {
      ...exchange({
        offsetMs: 60,
        status: 429,
        response: { error: { message: 'Rate limit reached for requests.', type: 'requests', code: 'rate_limit_exceeded' } },
        llm: { model: 'gpt-4.1', errorType: 'requests' },
        match: { kind: 'fault', reason: 'injected by fault rule #1 openai call 2 -> 429' },
      }),
      notes: { fault: '#1 openai call 2 -> 429' },
    };
    const cut = {
      ...exchange({
        offsetMs: 70,
        llm: { model: 'gpt-4.1', outputText: 'You asked' },
        match: { kind: 'exact', source: '000001' },
      }),
      error: {
        code: 'FAULT_CUT',
        message: 'cut after 2 event(s) by fault rule #2 openai call 3 -> cut after 2 events',
        phase: 'stream' as const,
      },
      notes: { fault: '#2 openai call 3 -> cut after 2 events' },
    };
    expect(upstreamFailures([ok, injected, cut])).toEqual([]);
    expect(runTrouble([ok, injected, cut])).toBeUndefined();
    expect(injectedFaults([ok, injected, cut])).toEqual([
      {
        step: 1,
        call: 'LLM gpt-4.1',
        rule: '#1 openai call 2 -> 429',
        what: 'HTTP 429 rate_limit_exceeded: Rate limit reached for requests.',
      },
      { step: 2, call: 'LLM gpt-4.1', rule: '#2 openai call 3 -> cut after 2 events', what: 'the answer cut after 2 event(s)' },
    ]);
    expect(runFaults([ok, injected])).toBe(
      "injected by tapedeck's fault rules, not by an upstream: HTTP 429 rate_limit_exceeded: Rate limit reached for requests. " +
        'for LLM gpt-4.1 at step 1 (rule #1 openai call 2 -> 429)',
    );
  });

  it('names the calls the tape had no recording for, with what was asked and why', () => {
    const miss = exchange({
      offsetMs: 80,
      body: { model: 'gpt-4.1', messages: [{ role: 'user', content: 'something else' }] },
      llm: { model: 'gpt-4.1' },
      status: 404,
      match: { kind: 'miss', reason: 'no recorded request has this exact key' },
    });
    expect(missedCalls([ok, miss])).toEqual([
      { step: 1, call: 'LLM gpt-4.1', asked: 'something else', reason: 'no recorded request has this exact key' },
    ]);
  });
});
