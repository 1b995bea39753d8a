// Record-path cost of redaction per exchange: headers/query (always), the one-pass secret prefilter over the line,
// and the structural walk plus re-serialisation when the prefilter hits. A typical chat-completion exchange, without
// a secret and with one in the prompt. Also the exact key of the same request (replay's per-request cost).
// Run: npm run build && node bench/redaction.mjs
import { createRedactor } from '../dist/tape/redaction/redact.js';
import { createMarkerReplacer } from '../dist/tape/redaction/secrets.js';
import { serializeExchange } from '../dist/tape/serialize.js';
import { exactKey } from '../dist/replay/exact-key.js';

const prompt = (secret) => [
  { role: 'system', content: 'You are a careful coding agent. Use the tools to inspect the repository before answering.' },
  {
    role: 'user',
    content: `Fix the failing test in src/checkout/cart.ts; the CI log says: expected 3 items, got 2.${secret ? ` Use ${secret} to clone.` : ''}`,
  },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: 'call_Zq8WmX2vLk4Rn7Tp1Ys3Ub6Hc',
        type: 'function',
        function: { name: 'read_file', arguments: '{"path":"src/checkout/cart.ts"}' },
      },
    ],
  },
  {
    role: 'tool',
    tool_call_id: 'call_Zq8WmX2vLk4Rn7Tp1Ys3Ub6Hc',
    content:
      'export function addItem(cart, item) {\n  if (cart.items.length > 2) return cart;\n  return { ...cart, items: [...cart.items, item] };\n}\n',
  },
];
const exchange = (secret) => ({
  type: 'exchange',
  id: '000042',
  seq: 42,
  startedAt: '2026-11-22T15:30:46.311Z',
  offsetMs: 81.4,
  transport: 'http',
  route: '/openai',
  upstream: 'https://api.openai.com',
  request: {
    method: 'POST',
    path: '/v1/chat/completions',
    query: [],
    headers: {
      authorization: 'Bearer sk-test-0123456789abcdefghijklmnop',
      'content-type': 'application/json',
      'user-agent': 'OpenAI/JS 6.49.0',
    },
    body: {
      kind: 'json',
      json: {
        model: 'gpt-4o-mini',
        temperature: 0,
        messages: prompt(secret),
        tools: [
          {
            type: 'function',
            function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
          },
        ],
      },
    },
  },
  response: {
    status: 200,
    headers: { 'content-type': 'application/json', 'x-request-id': 'req_8f2a9c', 'openai-processing-ms': '412' },
    body: {
      kind: 'json',
      json: {
        id: 'chatcmpl-AqZx8yBv3Lk2Mn9Pq4Rs7Tu1Vw',
        object: 'chat.completion',
        created: 1700000000,
        model: 'gpt-4o-mini-2024-07-18',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'The guard `cart.items.length > 2` drops the third item: it should be `>= MAX_ITEMS` with MAX_ITEMS = 10.',
              refusal: null,
            },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 412, completion_tokens: 38, total_tokens: 450 },
        system_fingerprint: 'fp_44709d6fcb',
      },
    },
  },
  timing: { ttfbMs: 410.2, durationMs: 415.9 },
  llm: {
    provider: 'openai',
    api: 'chat.completions',
    model: 'gpt-4o-mini',
    params: { temperature: 0 },
    streamed: false,
    usage: { inputTokens: 412, outputTokens: 38, totalTokens: 450 },
    toolCalls: [],
    outputText: 'The guard drops the third item.',
    stopReason: 'stop',
  },
});

const redactor = createRedactor();
const markers = createMarkerReplacer();
const baseline = (ex) => serializeExchange(redactor.exchange(ex));
const withSecrets = (ex) => {
  let out = redactor.exchange(ex);
  let line = serializeExchange(out);
  if (redactor.secrets.mayHold(line)) {
    out = redactor.secrets.redact(out, markers);
    line = serializeExchange(out);
  }
  return line;
};

function perCall(fn, arg, n = 20000) {
  for (let i = 0; i < 2000; i++) fn(arg);
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(arg);
    runs.push(Number(process.hrtime.bigint() - t) / n / 1000);
  }
  return runs.sort((a, b) => a - b)[2];
}

export async function run() {
  const clean = exchange(undefined);
  const dirty = exchange('ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8');
  if (withSecrets(dirty).includes('ghp_a1B2')) throw new Error('the secret was not redacted');
  const line = baseline(clean).length;
  const b = perCall(baseline, clean);
  const c = perCall(withSecrets, clean);
  const d = perCall(withSecrets, dirty);
  const k = perCall((ex) => exactKey(ex), clean);
  const kd = perCall((ex) => exactKey(ex), dirty);
  console.log(`\nRedaction per exchange (chat completion with a tool call, line ${line} chars; median of 5 x 20,000)`);
  console.log(`  headers/query + serialise (before)      ${b.toFixed(1)} us`);
  console.log(`  + secret prefilter, no secret           ${c.toFixed(1)} us  (+${(c - b).toFixed(1)} us)`);
  console.log(`  + prefilter, walk, re-serialise: 1 secret ${d.toFixed(1)} us  (+${(d - b).toFixed(1)} us)`);
  console.log(`  exact key (replay), no secret / 1 secret ${k.toFixed(1)} / ${kd.toFixed(1)} us`);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
