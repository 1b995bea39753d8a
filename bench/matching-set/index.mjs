// tapedeck's matching evaluation set: thousands of request pairs, generated (deterministic) from the families'
// definitions alone, never tuned on any other set. The adversarial side holds pairs that mean something different
// (every one must miss: a served answer is a false hit); the benign side holds the rewordings docs/matching.md
// promises (each must be served its own recording, with its adversarial twin on the tape as a decoy).
//
//   const pairs = matchingSet();
//   const report = await evaluate(pairs, createReplayMatcher);   // per family: pairs, false hits, recall
//
// Plain JavaScript with no tapedeck import, so the CI test (src) and `npm run bench:matching` (dist) share it.
import { conversationPairs, textPairs } from './build.mjs';
import {
  ADDRESSES,
  MCP_QUERIES,
  NOISE_FIELDS,
  RUN_TEMPLATES,
  callIdItems,
  contractionItems,
  formItems,
  functionWordItems,
  nonceItems,
  proseSymbolItems,
  spellingItems,
  systemNoiseItems,
} from './benign.mjs';
import { codeItems } from './code.mjs';
import { PARAMETER_CHANGES, SYSTEM_CHANGES, historyItems, identifierItems, roleItems, toolResultItems } from './context.mjs';
import { APIS, conversation, request } from './frame.mjs';
import {
  antonymItems,
  cjkItems,
  comparisonItems,
  entityItems,
  factItems,
  functionSwapItems,
  germanItems,
  letterItems,
  modalItems,
  negationItems,
} from './words.mjs';

/** The adversarial text families: each item two texts that mean different things. */
export function textFamilies() {
  return [
    ['modal', modalItems()],
    ['comparison', comparisonItems()],
    ['close in letters', letterItems()],
    ['code and symbols', codeItems()],
    ['antonym', antonymItems()],
    ['swapped roles', roleItems()],
    ['look-alike entity', entityItems()],
    ['identifier in prose', identifierItems()],
    ['negation', negationItems()],
    ['number, quantity, time, question', factItems()],
    ['person, preposition, tense', functionSwapItems()],
    ['german one word', germanItems()],
    ['cjk one character', cjkItems()],
  ];
}

/** Every pair of the set, adversarial then benign, in a fixed order. */
export function matchingSet() {
  const families = textFamilies();
  const pairs = [];
  for (const [family, items] of families) pairs.push(...textPairs(family, 'adversarial', items));
  pairs.push(...conversationPairs('earlier turn', 'adversarial', historyItems()));
  pairs.push(...conversationPairs('tool result', 'adversarial', toolResultItems()));
  pairs.push(...parameterPairs(families));
  pairs.push(...systemChangePairs(families));

  const texts = families.flatMap(([, items]) => items);
  pairs.push(...textPairs('letter case, whitespace, punctuation', 'benign', formItems(families), { rotate: true }));
  pairs.push(...textPairs('letter case, whitespace, punctuation', 'benign', proseSymbolItems(), { rotate: true }));
  pairs.push(...textPairs('function words', 'benign', functionWordItems(families), { rotate: true }));
  pairs.push(...textPairs('spelling variants', 'benign', spellingItems()));
  pairs.push(...textPairs('contractions', 'benign', contractionItems()));
  pairs.push(...conversationPairs('system prompt clock and session', 'benign', systemNoiseItems(texts)));
  pairs.push(...textPairs('provider ids and labelled nonces', 'benign', nonceItems(texts), { rotate: true }));
  pairs.push(...conversationPairs('tool call ids', 'benign', callIdItems()));
  pairs.push(...noiseFieldPairs(texts));
  pairs.push(...mcpPairs());
  pairs.push(...varyingPairs());
  return pairs;
}

/** The same text asked with other parameters (model, temperature, tools, formats): never the same request. */
function parameterPairs(families) {
  const out = [];
  const texts = families.flatMap(([, items]) => items).filter((_, k) => k % 7 === 0);
  let k = 0;
  for (const api of APIS)
    for (const [a, b] of PARAMETER_CHANGES[api])
      for (const [from, to] of [
        [a, b],
        [b, a],
      ]) {
        const it = texts[k++ % texts.length];
        const conv = conversation(it.domain, it.lang, 'plain', it.a);
        out.push({
          family: 'parameters',
          side: 'adversarial',
          lang: it.lang,
          api,
          context: 'plain',
          note: `${JSON.stringify(from)} / ${JSON.stringify(to)}`,
          recorded: request(api, conv, from),
          incoming: request(api, conv, to),
        });
      }
  return out;
}

/** A system prompt changed by one word: the same user text means a different request. */
function systemChangePairs(families) {
  const out = [];
  const texts = families.flatMap(([, items]) => items).filter((it, k) => k % 11 === 0 && it.lang === 'en');
  let k = 0;
  for (const [a, b] of SYSTEM_CHANGES)
    for (const api of APIS.filter((x) => x !== 'mcp'))
      for (const [from, to] of [
        [a, b],
        [b, a],
      ]) {
        const it = texts[k++ % texts.length];
        const conv = (system) => ({ system, turns: [{ role: 'user', text: it.a }] });
        out.push({
          family: 'system prompt',
          side: 'adversarial',
          lang: 'en',
          api,
          context: 'plain',
          note: `${from} / ${to}`,
          recorded: request(api, conv(from)),
          incoming: request(api, conv(to)),
        });
      }
  return out;
}

/** `user`, `metadata`, `store`, ...: fields that never change the answer; stream vs not; key order. */
function noiseFieldPairs(texts) {
  const out = [];
  let k = 0;
  for (const api of Object.keys(NOISE_FIELDS))
    for (const [a, b] of NOISE_FIELDS[api])
      for (let j = 0; j < 6; j++) {
        const it = texts[(k++ * 13) % texts.length];
        const conv = conversation(it.domain, it.lang, j % 2 === 0 ? 'plain' : 'history', it.a);
        out.push({
          family: 'ignored fields, stream, key order',
          side: 'benign',
          lang: it.lang,
          api,
          context: 'plain',
          note: `${JSON.stringify(a)} / ${JSON.stringify(b)}`,
          recorded: request(api, conv, a),
          incoming: request(api, conv, b),
        });
      }
  // Key order: the same body with its keys written in reverse.
  for (let j = 0; j < 20; j++) {
    const it = texts[(j * 17) % texts.length];
    const api = APIS[j % APIS.length];
    const recorded = request(api, conversation(it.domain, it.lang, 'plain', it.a));
    out.push({
      family: 'ignored fields, stream, key order',
      side: 'benign',
      lang: it.lang,
      api,
      context: 'plain',
      note: 'key order',
      recorded,
      incoming: { ...recorded, body: reversedKeys(recorded.body) },
    });
  }
  return out;
}

function reversedKeys(v) {
  if (Array.isArray(v)) return v.map(reversedKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .reverse()
      .map((k) => [k, reversedKeys(v[k])]),
  );
}

const mcpCall = (id, name, args, meta) => ({
  route: '/mcp',
  path: '/',
  body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } },
});

/** MCP: an address with or without its region, JSON-RPC ids and `_meta`, nonce-named arguments, query case. */
function mcpPairs() {
  const out = [];
  const push = (note, recorded, incoming) =>
    out.push({ family: 'MCP ids, _meta, addresses', side: 'benign', lang: 'en', api: 'mcp', context: 'plain', note, recorded, incoming });
  for (const [a, b] of ADDRESSES) {
    for (const tool of ['get_weather', 'geocode']) {
      push(`${a} / ${b}`, mcpCall(1, tool, { address: a }), mcpCall(1, tool, { address: b }));
      push(`${b} / ${a}`, mcpCall(1, tool, { address: b }), mcpCall(1, tool, { address: a }));
    }
  }
  MCP_QUERIES.forEach((q, k) => {
    push(
      'JSON-RPC id and _meta',
      mcpCall(k + 1, 'search', { query: q }, { progressToken: k }),
      mcpCall(`r-${k}`, 'search', { query: q }, { progressToken: `p-${k}` }),
    );
    push(
      'request_id argument',
      mcpCall(1, 'search', { query: q, request_id: `r-1a2b3c${k}` }),
      mcpCall(1, 'search', { query: q, request_id: `r-9z8y7x${k}` }),
    );
    push(
      'timestamp argument',
      mcpCall(1, 'search', { query: q, timestamp: `2026-11-2${k}T10:00:00Z` }),
      mcpCall(1, 'search', { query: q, timestamp: `2026-11-2${k}T11:30:00Z` }),
    );
    push(
      'query case and punctuation',
      mcpCall(1, 'search', { query: q }),
      mcpCall(1, 'search', { query: `${q[0].toUpperCase()}${q.slice(1)}?` }),
    );
  });
  return out;
}

const RUNS = [
  '3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8',
  '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b',
  '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d',
  '2026-11-22T18:35:31Z',
  '2026-11-23T09:01:02Z',
  '2026-11-24T07:12:45Z',
];

/**
 * A run id in the user's text that the tape shows varying: two recorded runs, each stamping its id on two requests;
 * a third run's request is served, the id set aside.
 */
function varyingPairs() {
  const out = [];
  let k = 0;
  RUN_TEMPLATES.forEach(([domain, template], t) => {
    for (const ids of [RUNS.slice(0, 3), RUNS.slice(3, 6)])
      for (const api of APIS.filter((a) => a !== 'mcp')) {
        const ask = (run, text = template) => request(api, conversation(domain, 'en', 'plain', text.replace('{}', run)));
        // Another request of the same runs (another template), so each run's id is stamped on two requests.
        const other = RUN_TEMPLATES[(t + 1 + (k++ % (RUN_TEMPLATES.length - 1))) % RUN_TEMPLATES.length][1];
        out.push({
          family: 'run ids the tape shows varying',
          side: 'benign',
          lang: 'en',
          api,
          context: 'plain',
          note: template,
          recorded: ask(ids[0]),
          also: [ask(ids[0], other), ask(ids[1]), ask(ids[1], other)],
          incoming: ask(ids[2]),
        });
      }
  });
  return out;
}

/** The set's requests as tape exchanges and incoming requests. */
function exchangeOf(req, seq) {
  return {
    type: 'exchange',
    id: String(seq).padStart(6, '0'),
    seq,
    startedAt: '2026-11-22T18:35:31.000Z',
    offsetMs: seq,
    transport: 'http',
    route: req.route,
    request: {
      method: 'POST',
      path: req.path,
      query: [],
      headers: { 'content-type': 'application/json' },
      body: { kind: 'json', json: req.body },
    },
    response: { status: 200, headers: { 'content-type': 'application/json' }, body: { kind: 'json', json: { answer: seq } } },
    timing: { durationMs: 1 },
  };
}

function incomingOf(req) {
  return { route: req.route, request: { method: 'POST', path: req.path, query: [], body: { kind: 'json', json: req.body } } };
}

/** 95% upper bound on a rate seen 0 times in n trials (the rule of three), else the exact one-sided Clopper-Pearson. */
export function upperBound(hits, n) {
  if (n === 0) return 1;
  if (hits === 0) return 3 / n;
  let lo = hits / n;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (binomialCdf(hits, n, mid) > 0.05) lo = mid;
    else hi = mid;
  }
  return hi;
}

function binomialCdf(k, n, p) {
  let term = (1 - p) ** n;
  let sum = term;
  for (let i = 1; i <= k; i++) {
    term *= ((n - i + 1) / i) * (p / (1 - p));
    sum += term;
  }
  return sum;
}

/**
 * Run every pair against a fresh matcher (`createReplayMatcher` from tapedeck): the tape holds the decoys, the
 * recording, and any further recordings; the incoming request is matched once. Returns per-family rows and the
 * pairs that went wrong.
 */
export async function evaluate(pairs, createReplayMatcher, opts = {}) {
  const rows = new Map();
  const wrong = [];
  for (const p of pairs) {
    const key = `${p.side}\u0000${p.family}`;
    let row = rows.get(key);
    if (row === undefined)
      rows.set(key, (row = { side: p.side, family: p.family, pairs: 0, falseHits: 0, served: 0, langs: new Set(), apis: new Set() }));
    row.pairs++;
    row.langs.add(p.lang);
    row.apis.add(p.api);
    let seq = 0;
    const decoys = (p.decoys ?? []).map((r) => exchangeOf(r, seq++));
    const target = exchangeOf(p.recorded, seq++);
    const also = (p.also ?? []).map((r) => exchangeOf(r, seq++));
    const matcher = createReplayMatcher([...decoys, target, ...also], opts.matcher ?? {});
    const out = await matcher.match(incomingOf(p.incoming));
    if (out.kind === 'miss') {
      if (p.side === 'benign') wrong.push({ pair: p, outcome: 'missed', why: out.explanation });
      continue;
    }
    const right = p.side === 'benign' && out.exchange === target;
    if (right) row.served++;
    else {
      row.falseHits++;
      wrong.push({ pair: p, outcome: `served #${out.exchange.id} by ${out.stage} (${out.score.toFixed(2)})`, why: out.explanation });
    }
  }
  const list = [...rows.values()].map((r) => ({ ...r, langs: [...r.langs].sort(), apis: [...r.apis].sort() }));
  const sum = (side, f) => list.filter((r) => r.side === side).reduce((n, r) => n + f(r), 0);
  return {
    rows: list,
    wrong,
    adversarial: { pairs: sum('adversarial', (r) => r.pairs), falseHits: sum('adversarial', (r) => r.falseHits) },
    benign: { pairs: sum('benign', (r) => r.pairs), served: sum('benign', (r) => r.served), falseHits: sum('benign', (r) => r.falseHits) },
  };
}

/** The report as text lines: a row per family, then the totals and the bound. */
export function reportLines(report) {
  const pct = (x) => `${(x * 100).toFixed(x < 0.01 ? 2 : 1)}%`;
  const lines = [];
  const pad = (s, n) => String(s).padEnd(n);
  const lpad = (s, n) => String(s).padStart(n);
  lines.push(`${pad('adversarial family', 36)} ${lpad('pairs', 6)} ${lpad('false hits', 10)} ${lpad('bound (95%)', 12)}  languages`);
  for (const r of report.rows.filter((x) => x.side === 'adversarial'))
    lines.push(
      `${pad(r.family, 36)} ${lpad(r.pairs, 6)} ${lpad(r.falseHits, 10)} ${lpad(`<= ${pct(upperBound(r.falseHits, r.pairs))}`, 12)}  ${r.langs.join(' ')}`,
    );
  const a = report.adversarial;
  lines.push(
    `${pad('all adversarial', 36)} ${lpad(a.pairs, 6)} ${lpad(a.falseHits, 10)} ${lpad(`<= ${pct(upperBound(a.falseHits, a.pairs))}`, 12)}`,
  );
  lines.push('');
  lines.push(`${pad('benign family', 36)} ${lpad('pairs', 6)} ${lpad('served', 7)} ${lpad('recall', 7)} ${lpad('wrong', 6)}  languages`);
  for (const r of report.rows.filter((x) => x.side === 'benign'))
    lines.push(
      `${pad(r.family, 36)} ${lpad(r.pairs, 6)} ${lpad(r.served, 7)} ${lpad(pct(r.served / r.pairs), 7)} ${lpad(r.falseHits, 6)}  ${r.langs.join(' ')}`,
    );
  const b = report.benign;
  lines.push(
    `${pad('all benign', 36)} ${lpad(b.pairs, 6)} ${lpad(b.served, 7)} ${lpad(pct(b.served / b.pairs), 7)} ${lpad(b.falseHits, 6)}`,
  );
  return lines;
}
