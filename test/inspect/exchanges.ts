/** Builders for hand-made exchanges in unit tests (the integration tests use tapes recorded through the proxy). */
import type { Exchange, LlmMeaning, McpMeaning } from '../../src/tape/schema.js';

let seq = 0;

export function exchange(opts: {
  offsetMs: number;
  body?: unknown;
  response?: unknown;
  status?: number;
  llm?: Partial<LlmMeaning>;
  mcp?: Partial<McpMeaning>;
  route?: string;
  path?: string;
  durationMs?: number;
  match?: Exchange['match'];
  error?: Exchange['error'];
}): Exchange {
  const s = seq++;
  const ex: Exchange = {
    type: 'exchange',
    id: String(s).padStart(6, '0'),
    seq: s,
    startedAt: new Date(1_700_000_000_000 + opts.offsetMs).toISOString(),
    offsetMs: opts.offsetMs,
    transport: 'http',
    route: opts.route ?? (opts.mcp ? '/mcp' : '/openai'),
    request: {
      method: 'POST',
      path: opts.path ?? '/v1/chat/completions',
      query: [],
      headers: {},
      body: opts.body === undefined ? { kind: 'empty' } : { kind: 'json', json: opts.body },
    },
    timing: { durationMs: opts.durationMs ?? 10 },
  };
  if (opts.error) ex.error = opts.error;
  else
    ex.response = {
      status: opts.status ?? 200,
      headers: {},
      body: opts.response === undefined ? { kind: 'empty' } : { kind: 'json', json: opts.response },
    };
  if (opts.llm) ex.llm = { provider: 'openai', api: 'chat.completions', params: {}, streamed: false, toolCalls: [], ...opts.llm };
  if (opts.mcp)
    ex.mcp = { direction: 'client-to-server', method: 'tools/call', notifications: [], transport: 'streamable-http', ...opts.mcp };
  if (opts.match) ex.match = opts.match;
  return ex;
}
