/**
 * Request meaning is computed once per request and carried on it (issue 24): the `--llm live` responder and the
 * replayer's matching read the same answer, detected with the route's upstream as the recorder detects it (so an
 * OpenAI route under another name is `openai` in replay too, not `openai-compatible`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerProvider, type ProviderAdapter } from '../../src/index.js';
import { createLlmLiveResponder } from '../../src/transports/http/llm-live.js';
import { requestMeaning } from '../../src/http/request-meaning.js';
import { toIncoming } from '../../src/http/http-call.js';
import type { ProxyRequest, ReplayContext } from '../../src/http/types.js';
import { parrot } from '../providers/parrot-provider.js';

let detections = 0;
/** An adapter that claims nothing and counts how often detection asks it: once per detection pass. */
const probe: ProviderAdapter = {
  ...parrot,
  api: 'probe.count',
  provider: undefined,
  credentials: [],
  detect: () => {
    detections++;
    return undefined;
  },
};

const chat = (): ProxyRequest => ({
  route: { prefix: '/llm', upstream: 'https://api.openai.com' },
  method: 'POST',
  path: '/v1/chat/completions',
  query: [],
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], temperature: 0 })),
  startedAt: new Date(),
  offsetMs: 0,
  t0: performance.now(),
});

describe('request meaning, once per request', () => {
  let unregister: () => void;
  beforeAll(() => (unregister = registerProvider(probe)));
  afterAll(() => unregister());

  it('the --llm live responder and the replayer share one detection, made with the upstream', async () => {
    const req = chat();
    detections = 0;
    // The first call is answered from the tape (--live-after 1): the responder passes it on to the replayer.
    const responder = createLlmLiveResponder({ model: 'gpt-4.1' }, { fromTapeFirst: 1 });
    expect(await responder.decide(req, {} as ReplayContext)).toBeUndefined();
    const incoming = toIncoming(req);
    expect(detections).toBe(1);
    expect(incoming.llm).toMatchObject({ provider: 'openai', api: 'chat.completions', model: 'gpt-4o-mini', params: { temperature: 0 } });
    expect(requestMeaning(req).llm).toBe(incoming.llm);
  });
});
