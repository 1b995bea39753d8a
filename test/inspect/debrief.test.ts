import { describe, expect, it } from 'vitest';
import { debrief, renderDebrief } from '../../src/inspect/debrief.js';
import { styleFor } from '../../src/inspect/format.js';
import { toSteps } from '../../src/inspect/steps.js';
import { PassThrough } from 'node:stream';
import { exchange } from './exchanges.js';

const plain = styleFor(new PassThrough(), {});

describe('debrief', () => {
  it('takes reasons only from what the model wrote, and says when there is none', () => {
    const steps = toSteps([
      exchange({
        offsetMs: 0,
        body: { messages: [{ role: 'user', content: 'Plan my trip to Rome' }] },
        llm: {
          outputText: 'I will check flights first. <rationale>Flights decide the dates.</rationale>',
          toolCalls: [{ id: 'c1', name: 'search_flights', arguments: { to: 'FCO' } }],
          usage: { inputTokens: 10, outputTokens: 5 },
        },
      }),
      exchange({ offsetMs: 10, mcp: { toolName: 'search_flights', arguments: { to: 'FCO' }, result: { flights: 3 } } }),
      exchange({
        offsetMs: 20,
        body: { messages: [{ role: 'user', content: 'Plan my trip to Rome' }] },
        llm: { toolCalls: [{ id: 'c2', name: 'book_hotel', arguments: {} }], usage: { inputTokens: 20, outputTokens: 3 } },
      }),
      exchange({ offsetMs: 30, mcp: { toolName: 'book_hotel', isError: true, result: { content: [{ type: 'text', text: 'sold out' }] } } }),
      exchange({
        offsetMs: 40,
        body: { messages: [] },
        llm: {
          thinking: 'Hotels are gone. I assume the user is flexible because no dates were given.',
          outputText: 'Flights exist; hotels are sold out.',
          stopReason: 'stop',
          usage: { inputTokens: 30, outputTokens: 9 },
        },
      }),
    ]);
    const d = debrief(steps);
    expect(d.goal).toBe('Plan my trip to Rome');
    expect(d.decisions.map((c) => c.tool)).toEqual(['search_flights', 'book_hotel']);
    expect(d.decisions[0]?.reasons).toEqual([
      { source: 'rationale', text: 'Flights decide the dates.' },
      { source: 'text-before-call', text: 'I will check flights first.' },
    ]);
    expect(d.decisions[0]?.result).toEqual({ step: 1, value: { flights: 3 } });
    expect(d.decisions[1]?.reasons).toEqual([]);
    expect(d.decisions[1]?.result?.isError).toBe(true);
    expect(d.assumptions).toEqual([
      {
        step: 4,
        text: 'I assume the user is flexible because no dates were given.',
        assumption: 'the user is flexible',
        because: 'no dates were given',
      },
    ]);
    expect(d.ending).toEqual({
      step: 4,
      stopReason: 'stop',
      finalAnswer: 'Flights exist; hotels are sold out.',
      error: null,
      verdict: 'success',
    });
    expect(d.totals).toEqual({ steps: 5, llmCalls: 3, toolCalls: 2, inputTokens: 60, outputTokens: 17, durationMs: 50, errors: 1 });

    const text = renderDebrief(d, 100, plain).join('\n');
    expect(text).toContain('goal: Plan my trip to Rome');
    expect(text).toContain('why (rationale): Flights decide the dates.');
    expect(text).toMatch(/2\. book_hotel\(\{\}\).*\n\s+why: the model stated no reason/);
    expect(text).toContain('got ERROR (step 3)');
    expect(text).toContain('termination: stop · verdict success | 77 tok | 50ms');
    expect(text).toContain('step 4: the user is flexible (because no dates were given)');
  });

  it('reads an assumption inside a rationale block by its why, never the JSON around it, and shows the alternatives weighed', () => {
    const why = 'I assume the user means Celsius because the city is in Europe';
    const steps = toSteps([
      exchange({
        offsetMs: 0,
        body: { messages: [{ role: 'user', content: 'Weather in Lisbon?' }] },
        llm: {
          outputText:
            `<rationale call="1">${JSON.stringify({
              why,
              confidence: 0.8,
              alternatives: [
                { option: 'search', rejectedBecause: 'a forecast needs the weather service' },
                { option: 'ask the user for units' },
              ],
            })}</rationale>` + ' Since no time was given, I assume they mean today.',
          toolCalls: [{ id: 'a', name: 'get_weather', arguments: { city: 'Lisbon' } }],
        },
      }),
    ]);
    const d = debrief(steps);
    expect(d.assumptions).toEqual([
      { step: 0, text: `${why}.`, assumption: 'the user means Celsius', because: 'the city is in Europe' },
      { step: 0, text: 'Since no time was given, I assume they mean today.', assumption: 'they mean today', because: 'no time was given' },
    ]);
    expect(d.decisions[0]?.reasons[0]).toEqual({
      source: 'rationale',
      text: why,
      confidence: 0.8,
      alternatives: [{ option: 'search', rejectedBecause: 'a forecast needs the weather service' }, { option: 'ask the user for units' }],
    });
    const text = renderDebrief(d, 120, plain).join('\n');
    expect(text).not.toContain('{"why"');
    expect(text).toContain('step 0: the user means Celsius (because the city is in Europe)');
    expect(text).toContain('step 0: they mean today (because no time was given)');
    expect(text).toContain('     instead of search: rejected because a forecast needs the weather service');
    expect(text).toContain('     instead of ask the user for units');
  });

  it('keeps an assumption with no stated reason whole', () => {
    const d = debrief(
      toSteps([exchange({ offsetMs: 0, body: { messages: [] }, llm: { outputText: 'Assuming metric units. The answer is 3 km.' } })]),
    );
    expect(d.assumptions).toEqual([{ step: 0, text: 'Assuming metric units.', assumption: 'metric units' }]);
  });

  it('reads <rationale call="N">{json}</rationale> for the Nth call of the response, with confidence and refs', () => {
    const steps = toSteps([
      exchange({
        offsetMs: 0,
        body: { messages: [{ role: 'user', content: 'Price of AAPL in EUR' }] },
        llm: {
          outputText:
            '<rationale call="2">{"why":"convert the price","confidence":0.7}</rationale>' +
            '<rationale call="1">{"why":"needs fresh price data","confidence":0.9,"refs":["scratch:goal"]}</rationale>',
          toolCalls: [
            { id: 'a', name: 'web_search', arguments: { q: 'AAPL' } },
            { id: 'b', name: 'fx', arguments: { to: 'EUR' } },
          ],
        },
      }),
      exchange({ offsetMs: 10, mcp: { toolName: 'web_search', arguments: { q: 'AAPL' }, result: { price: 200 } } }),
      exchange({ offsetMs: 20, mcp: { toolName: 'fx', arguments: { to: 'EUR' } }, match: { kind: 'blocked', reason: 'side effect' } }),
      exchange({ offsetMs: 30, body: { messages: [] }, llm: { outputText: 'About 185 EUR.', stopReason: 'end_turn' } }),
    ]);
    const d = debrief(steps);
    expect(d.decisions[0]?.reasons).toEqual([
      { source: 'rationale', text: 'needs fresh price data', confidence: 0.9, refs: ['scratch:goal'] },
    ]);
    expect(d.decisions[1]?.reasons).toEqual([{ source: 'rationale', text: 'convert the price', confidence: 0.7 }]);
    expect(d.ending.verdict).toBe('blocked');
    const text = renderDebrief(d, 100, plain).join('\n');
    expect(text).toContain('why (rationale): needs fresh price data (conf 0.9; refs: scratch:goal)');
    expect(text).toContain('termination: end_turn · verdict blocked');
  });

  it('gives each of several Anthropic tool calls the text written just before it', () => {
    const response = {
      content: [
        { type: 'text', text: 'First the weather.' },
        { type: 'tool_use', id: 't1', name: 'weather', input: {} },
        { type: 'text', text: 'Then the time.' },
        { type: 'tool_use', id: 't2', name: 'clock', input: {} },
      ],
    };
    const steps = toSteps([
      exchange({
        offsetMs: 0,
        route: '/anthropic',
        path: '/v1/messages',
        body: { messages: [{ role: 'user', content: 'Paris now?' }] },
        response,
        llm: {
          provider: 'anthropic',
          api: 'messages',
          outputText: 'First the weather.Then the time.',
          toolCalls: [
            { id: 't1', name: 'weather', arguments: {} },
            { id: 't2', name: 'clock', arguments: {} },
          ],
        },
      }),
    ]);
    const d = debrief(steps);
    expect(d.decisions.map((c) => c.reasons)).toEqual([
      [{ source: 'text-before-call', text: 'First the weather.' }],
      [{ source: 'text-before-call', text: 'Then the time.' }],
    ]);
    expect(d.ending.finalAnswer).toBeNull();
  });
});
