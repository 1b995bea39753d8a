import { describe, expect, it } from 'vitest';
import { listTapes } from '../../src/inspect/summary.js';
import { toSteps } from '../../src/inspect/steps.js';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { TAPES } from '../fixtures/compat/compat.js';

describe("a WebSocket session's LLM calls in a tape's totals", () => {
  it('list counts the Realtime responses as show does (calls and tokens)', async () => {
    const store = createDirStore(TAPES);
    const steps = toSteps((await store.load('realtime')).exchanges).filter((s) => s.kind === 'LLM');
    const page = await listTapes(store, { prefix: 'realtime' });
    const row = page.tapes[0];
    expect(row?.ok && row.summary.llmCalls).toBe(steps.length);
    expect(steps.length).toBe(2);
    expect(row?.ok && row.summary.tokens.total).toBe(steps.reduce((n, s) => n + (s.tokens?.total ?? 0), 0));
    const json = await runCliInProcess(['list', 'realtime', '--dir', TAPES, '--json']);
    expect((JSON.parse(json.stdout) as { llmCalls: number }[])[0]?.llmCalls).toBe(2);
  });
});
