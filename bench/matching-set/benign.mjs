// The harmless side: every rewording docs/matching.md promises is served the recording (and never its decoy, the
// adversarial twin of the same text, which sits on the same tape). Letter case, whitespace, prose punctuation,
// function words, known spelling variants, contractions, per-run noise in the system prompt, provider ids and
// labelled nonces, fields that never change the answer, key order and stream, addresses with their region, MCP ids,
// and identifiers the tape shows varying between runs.
import { item, swap } from './build.mjs';
import { SYSTEM } from './frame.mjs';

/** Harmless rewordings of a text: [name, transform] (a transform returns undefined when it does not apply). */
const FORM = [
  ['lower case', (t) => t.toLowerCase()],
  ['first letter', (t) => (/^\p{Lu}/u.test(t) ? t[0].toLowerCase() + t.slice(1) : t[0].toUpperCase() + t.slice(1))],
  ['whitespace', (t) => `  ${t.replace(/ /g, (s, i) => (i % 3 === 0 ? '   ' : s))}\n`],
  ['line break', (t) => (t.includes(' ') ? t.replace(/ (?=[^ ]*$)/, '\n') : undefined)],
  ['end punctuation', (t) => (/[.?!。？]$/.test(t) ? t.slice(0, -1) : `${t}.`)],
  ['commas', (t) => (/\p{L}, /u.test(t) ? t.replace(/(\p{L}), /gu, '$1 ') : undefined)],
  ['exclamation', (t) => (/[.]$/.test(t) ? `${t.slice(0, -1)}!` : undefined)],
];

/** Transforms safe for code: whitespace between words and the sentence's last mark only. */
const CODE_SAFE = new Set(['whitespace', 'end punctuation']);

/**
 * Letter case, whitespace and punctuation rewordings of the adversarial items' texts: each is served its recording,
 * with the adversarial twin on the tape as a decoy.
 */
export function formItems(families) {
  const out = [];
  let k = 0;
  for (const [family, items] of families) {
    for (const it of items) {
      const usable = FORM.filter(([name]) =>
        family === 'code and symbols' ? CODE_SAFE.has(name) : name !== 'line break' || !it.a.includes('```'),
      );
      // One rewording per item, the kinds taken in turn (the next kind when one does not apply).
      for (let j = 0; j < usable.length; j++) {
        const [name, transform] = usable[(k + j) % usable.length];
        const b = transform(it.a);
        if (b === undefined || b === it.a) continue;
        out.push({ ...item(it.lang, it.domain, [it.a, b], `${name}: ${it.a.slice(0, 50)}`), decoy: it.b });
        break;
      }
      k++;
    }
  }
  return out;
}

/** Prose with symbols in it (not code): letter case and punctuation are set aside there as anywhere in prose. */
const PROSE_SYMBOLS = [
  [
    'hr',
    'Summarize the Q&A session from the R&D all-hands meeting.',
    'Summarize the Q&A session from the R&D all-hands meeting on Friday.',
  ],
  ['finance', 'Explain the P&L for the third quarter to the board.', 'Explain the P&L for the fourth quarter to the board.'],
  ['coding', 'Design an A/B test for the new checkout button.', 'Design an A/B test for the old checkout button.'],
  ['coding', 'Why is the I/O wait so high on the database server?', 'Why is the I/O wait so low on the database server?'],
  ['coding', 'Is C++ or Rust better for a small embedded project?', 'Is C++ or Rust better for a large embedded project?'],
  ['support', 'Our support line is open 24/7, please say so in the reply.', 'Our support line is open 9/5, please say so in the reply.'],
  ['support', 'Email the report to ops@example.com before Monday.', 'Email the report to ops@example.com before Tuesday.'],
  ['coding', 'Which Node.js version does the build use, e.g. 20 or 22?', 'Which Node.js version does the build use, e.g. 18 or 22?'],
  ['travel', 'Do I need a visa for the U.S. for a two-week trip?', 'Do I need a visa for the U.S. for a three-week trip?'],
  ['retail', 'Is AT&T coverage good in rural Montana?', 'Is AT&T coverage good in rural Wyoming?'],
  ['finance', 'What did M&A activity look like in 2024?', 'What did M&A activity look like in 2023?'],
  [
    'support',
    'Check the status page at https://status.example.com and summarize it.',
    'Check the status page at https://status.example.org and summarize it.',
  ],
];

export function proseSymbolItems() {
  const out = [];
  for (const [domain, a, decoy] of PROSE_SYMBOLS) {
    for (const [name, transform] of FORM.slice(0, 5)) {
      const b = transform(a);
      if (b !== undefined && b !== a) out.push({ ...item('en', domain, [a, b], `${name}: ${a.slice(0, 50)}`), decoy });
    }
  }
  return out;
}

const IMPERATIVE =
  /^(Show|List|Explain|Summarize|Write|Find|Book|Sort|Send|Reset|Email|Add|Set|Forward|Grant|Clone|Order|Install|Run|Migrate|Convert|Transfer|Move|Cancel|Look|Check|Draft|Translate|Copy|Merge|Rename|Schedule|Ship|Give|Increase|Apply|Refund|Compare|Track|Pay|Open|Use|Upgrade|Pin|Delete|Route|Mark|Record|Classify|Promote|Replay|Close|Unblock|Revert|Dispute|Reassign|Forward|Switch|Change|Arrange|Tell|Include|Notify) /;

/** Function words added or dropped in English texts (at least eight words long, no code). */
const FUNCTION = [
  ['please', (t) => `Please ${t[0].toLowerCase()}${t.slice(1)}`],
  ['could you', (t) => (IMPERATIVE.test(t) ? `Could you ${t[0].toLowerCase()}${t.slice(1)}` : undefined)],
  ['can you please', (t) => (IMPERATIVE.test(t) ? `Can you please ${t[0].toLowerCase()}${t.slice(1)}` : undefined)],
  ['drop "the"', (t) => (/ the /.test(t) ? t.replace(/ the /, ' ') : undefined)],
  ['thanks', (t) => `${t} Thanks!`],
  ['greeting', (t) => `Hi! ${t}`],
  ['kindly', (t) => (IMPERATIVE.test(t) ? `Kindly ${t[0].toLowerCase()}${t.slice(1)}` : undefined)],
  ['a / the', (t) => (/ a (?=[a-z])/.test(t) ? t.replace(/ a (?=[a-z])/, ' the ') : undefined)],
];

export function functionWordItems(families) {
  const out = [];
  let k = 0;
  for (const [family, items] of families) {
    if (family === 'code and symbols') continue;
    for (const it of items) {
      if (it.lang !== 'en' || it.a.split(/\s+/).length < 8 || /[`/\\=*]/.test(it.a)) continue;
      for (let j = 0; j < FUNCTION.length; j++) {
        const [name, transform] = FUNCTION[(k + j) % FUNCTION.length];
        const b = transform(it.a);
        if (b === undefined) continue;
        out.push({ ...item('en', it.domain, [it.a, b], `${name}: ${it.a.slice(0, 50)}`), decoy: it.b });
        break;
      }
      k++;
    }
  }
  return out;
}

// ---- known spelling variants (British / American, old / new German) ----
const SPELLING = [
  ['support', 'Please {summarise|summarize} the meeting notes for the support team.'],
  ['travel', 'List the opening hours of the city {centre|center} library for the next visit.'],
  ['travel', 'How do I get from the airport to the {centre|center} of Lisbon by public transport?'],
  ['support', 'Which data {centre|center} hosts the European customers of the platform?'],
  ['retail', 'Is the shopping {centre|center} open late on Thursday evenings?'],
  ['coding', 'How do I {centre|center} the login form on the page with CSS grid?'],
  ['retail', 'Which {colour|color} options are available for the winter jacket?'],
  ['coding', 'How should we {organise|organize} the test files in the repository?'],
  ['finance', 'Please {analyse|analyze} the quarterly sales figures for every region.'],
  ['retail', 'Add the blue mug to my list of {favourite|favorite} products.'],
  ['medicine', 'Describe the {behaviour|behavior} changes seen after the new medication.'],
  ['travel', 'I {travelled|traveled} to Rome last week; which receipts do I need for the claim?'],
  ['retail', 'My order was {cancelled|canceled} yesterday; when will the refund arrive?'],
  ['retail', 'Is the spring {catalogue|catalog} available as a download?'],
  ['law', 'Do I need a {licence|license} to sell alcohol at the street market?'],
  ['law', 'What is the best {defence|defense} against a claim of late delivery?'],
  ['hr', 'Explain the graduate {programme|program} to the new intake.'],
  ['retail', 'Do you have the sofa in {grey|gray} velvet?'],
  ['retail', 'Is the {jewellery|jewelry} covered by the home insurance policy?'],
  ['medicine', 'What should nurses check before the {anaesthesia|anesthesia} in a day surgery?'],
  ['medicine', 'List the common causes of {anaemia|anemia} in adolescents.'],
  ['medicine', 'Which {paediatric|pediatric} doses are safe for this antibiotic?'],
  ['hr', 'How do we {recognise|recognize} long service in the annual awards?'],
  ['coding', 'Help me {optimise|optimize} the query that builds the monthly report.'],
  ['hr', 'Who should {authorise|authorize} the purchase of new laptops?'],
  ['support', 'Can we {customise|customize} the notification emails for each team?'],
  ['finance', 'What is the {labour|labor} cost for the new warehouse?'],
  ['travel', 'Which {theatre|theater} in town has shows in English this weekend?'],
  ['coding', 'Why does the {modelling|modeling} step take so long on large datasets?'],
  ['support', 'Please {apologise|apologize} to the customer for the delay and offer a voucher.'],
  ['hr', 'Write a short {neighbourhood|neighborhood} guide for new employees.'],
  ['finance', 'Should we {prioritise|prioritize} the loan or the savings plan this year?'],
  ['medicine', 'How is {oedema|edema} of the ankles treated in older patients?'],
  ['law', 'What counts as sound {judgement|judgment} in a duty of care case?'],
  ['retail', 'Is the {aluminium|aluminum} frame strong enough for mountain bikes?'],
  ['coding', 'How do I {serialise|serialize} the config object to JSON?'],
  ['travel', 'Is the hotel a short walk from the {theatre|theater} district?'],
];
const SPELLING_DE = [
  ['support', 'Ich glaube, {daß|dass} die Lieferung morgen ankommt. Was meinst du?'],
  ['travel', 'Wie komme ich vom Bahnhof zur {Straße|Strasse} am Hafen?'],
];

export function spellingItems() {
  return [
    ...SPELLING.map(([domain, t]) => item('en', domain, swap(t), swap(t).join(' / ').slice(0, 60))),
    ...SPELLING_DE.map(([domain, t]) => item('de', domain, swap(t), swap(t).join(' / ').slice(0, 60))),
  ];
}

// ---- contractions ----
const CONTRACTIONS = [
  ['support', "{What's|What is} the status of my support ticket from yesterday?"],
  ['retail', "I {don't|do not} see the discount applied to my order."],
  ['travel', "{It's|It is} my first trip to Japan; what should I know about trains?"],
  ['hr', "{I'm|I am} starting on Monday; what do I need to bring?"],
  ['coding', "Why {can't|cannot} the build find the config file?"],
  ['finance', "The payment {won't|will not} go through; what can I try?"],
  ['support', "The app {isn't|is not} loading on my phone since the update."],
  ['hr', "{Let's|Let us} plan the onboarding week for the two new engineers."],
  ['coding', "{We're|We are} moving the service to a new region; what could break?"],
  ['retail', "{They've|They have} sent me the wrong size; how do I exchange it?"],
  ['support', "{You'll|You will} need to reset the router; write the steps for the customer."],
  ['travel', "{I'd|I would} like a quiet room away from the lift."],
  ['finance', "{Where's|Where is} the invoice for the March order?"],
  ['medicine', "The patient {doesn't|does not} tolerate penicillin; suggest alternatives."],
  ['law', "{There's|There is} a penalty clause in the lease; explain it."],
  ['coding', "The test {didn't|did not} run on the CI server; why?"],
  ['hr', "{We've|We have} hired three people this month; draft the welcome email."],
  ['support', "I {haven't|have not} received the confirmation email yet."],
  ['retail', "{Who's|Who is} the seller of this item on the marketplace?"],
  ['travel', "{How's|How is} the weather in Lisbon in late October?"],
];

export function contractionItems() {
  return CONTRACTIONS.map(([d, t]) => item('en', d, swap(t)));
}

// ---- per-run noise in the system prompt: clocks and UUIDs ----
export const CLOCKS = [
  ['2026-11-22T18:35:31Z', '2026-11-23T09:01:02.125Z'],
  ['2026-11-22T18:35:31+01:00', '2026-11-24T07:12:45+01:00'],
  ['2026-11-22 18:35:31', '2026-11-22 19:02:11'],
  ['Sun Nov 22 2026 18:35:31 GMT+0000 (Coordinated Universal Time)', 'Mon Nov 23 2026 07:02:11 GMT+0000 (Coordinated Universal Time)'],
  ['Sun, 22 Nov 2026 18:35:31 GMT', 'Mon, 23 Nov 2026 07:02:11 GMT'],
  ['1795458931000', '1795503731000'],
  ['18:35:31', '09:01:02'],
];
export const UUIDS = [
  ['3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8', '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d'],
  ['7f1c0a2e-1b2c-4d3e-8f9a-0b1c2d3e4f5a', '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b'],
];

/** Conversations whose system prompt carries a clock or a session UUID that changes every run. */
export function systemNoiseItems(textItems) {
  const out = [];
  textItems.forEach((it, k) => {
    if (k % 6 !== 0) return;
    const [c1, c2] = CLOCKS[k % CLOCKS.length];
    const [u1, u2] = UUIDS[k % UUIDS.length];
    const system = (clock, uuid) =>
      k % 2 === 0
        ? `Current time: ${clock}. ${SYSTEM[it.domain] ?? SYSTEM.support}`
        : `${SYSTEM[it.domain] ?? SYSTEM.support} Session ${uuid}, started ${clock}.`;
    const conv = (s) => ({ system: s, turns: [{ role: 'user', text: it.a }] });
    out.push({ lang: it.lang, a: conv(system(c1, u1)), b: conv(system(c2, u2)), note: `system clock ${c1} / ${c2}`, repeat: 2 });
  });
  return out;
}

// ---- provider ids and labelled nonces in the text, call ids in the history ----
const NONCES = [
  ['request_id: a8f3k2m9q7', 'request_id: z1x2c3v4b5n6'],
  ['trace_id=4bf92f3577b34da6', 'trace_id=a3ce929d0e0e4736'],
  ['nonce: 8c1f2e7d9a', 'nonce: 0d9c8b7a6f'],
  ['idempotency key: 0f8fad5b-d9cb-469f', 'idempotency key: 7c9e6679-7425-40de'],
  ['correlation-id: 1a2b3c4d5e6f', 'correlation-id: 6f5e4d3c2b1a'],
  ['ref chatcmpl-9x8y7z6w5v4u3t2s', 'ref chatcmpl-1a2b3c4d5e6f7g8h'],
  ['(req_7QkP2mN9xLrT)', '(req_3ZwY8vB1cDeF)'],
];

export function nonceItems(textItems) {
  const out = [];
  textItems.forEach((it, k) => {
    if (k % 4 !== 1) return;
    const [n1, n2] = NONCES[k % NONCES.length];
    const a = k % 2 === 0 ? `${n1} ${it.a}` : `${it.a} ${n1}`;
    const b = k % 2 === 0 ? `${n2} ${it.a}` : `${it.a} ${n2}`;
    out.push(item(it.lang, it.domain, [a, b], `${n1} / ${n2}`));
  });
  return out;
}

/** The same tool call and result with the provider's call ids of another run. */
export function callIdItems() {
  const questions = [
    ['What is the weather in Oslo?', 'get_weather', { city: 'Oslo' }, 'sunny, 4 C'],
    ['What is the status of order 1042?', 'get_order', { id: '1042' }, { status: 'shipped' }],
    ['Is the blue jacket in stock?', 'check_stock', { sku: 'JK-204' }, { available: true }],
    ['Who is on call this week?', 'oncall', { team: 'payments' }, 'Hannah from payments'],
    ['Find articles about refunds.', 'search_help', { q: 'refunds' }, 'Search returned 3 results.'],
    ['When does flight LH 400 leave?', 'flight_status', { flight: 'LH400' }, 'Flight LH 400 departs at 13:05.'],
  ];
  return questions.map(([question, name, args, result], k) => {
    const conv = (id) => ({
      system: SYSTEM.support,
      turns: [
        { role: 'user', text: question },
        { role: 'assistant', call: { name, args }, id },
        { role: 'tool', name, result, id },
      ],
    });
    const ids = [
      ['call_AbC123xyz', 'call_QrS987uvw'],
      ['toolu_01AbCdEfGh', 'toolu_09ZyXwVuTs'],
      ['fc_7a8b9c0d1e2f', 'fc_1f2e3d4c5b6a'],
    ][k % 3];
    return { lang: 'en', a: conv(ids[0]), b: conv(ids[1]), note: `call ids ${ids[0]} / ${ids[1]}`, repeat: 4 };
  });
}

// ---- fields that never change the answer, key order, stream vs not ----
export const NOISE_FIELDS = {
  openai: [
    [{ user: 'alice' }, { user: 'bob' }],
    [{ metadata: { run: '1' }, store: true }, { metadata: { run: '2' } }],
    [{ safety_identifier: 'u-1' }, { safety_identifier: 'u-2' }],
    [{ prompt_cache_key: 'k-1' }, { prompt_cache_key: 'k-2' }],
    [{}, { stream: true, stream_options: { include_usage: true } }],
  ],
  responses: [
    [{ user: 'alice' }, { user: 'bob' }],
    [{ metadata: { run: '1' } }, { metadata: { run: '2' } }],
    [{ store: true }, { store: false }],
  ],
  anthropic: [
    [{ metadata: { user_id: 'u-1' } }, { metadata: { user_id: 'u-2' } }],
    [{ stream: true }, {}],
  ],
};

// ---- MCP: addresses with their region, JSON-RPC ids, _meta, nonce-named arguments ----
export const ADDRESSES = [
  ['10 Downing Street, London', '10 Downing Street, London, UK'],
  ['1600 Amphitheatre Parkway, Mountain View, CA 94043', '1600 Amphitheatre Parkway, Mountain View'],
  ['221B Baker Street, London', '221B Baker Street, London, United Kingdom'],
  ['350 Fifth Avenue, New York', '350 Fifth Avenue, New York, NY 10118'],
  ['Champ de Mars, 5 Avenue Anatole France, Paris', 'Champ de Mars, 5 Avenue Anatole France, Paris, France'],
  ['1 Infinite Loop, Cupertino', '1 Infinite Loop, Cupertino, CA'],
  ['Unter den Linden 77, Berlin', 'Unter den Linden 77, Berlin, Germany'],
  ['100 Queen Street West, Toronto', '100 Queen Street West, Toronto, ON'],
];
export const MCP_QUERIES = [
  'latest news about renewable energy in Europe',
  'how to configure an nginx reverse proxy with tls',
  'quarterly revenue of the retail division',
  'side effects of ibuprofen in older adults',
  'open pull requests in the payments repository',
];

// ---- identifiers the tape shows varying between runs ----
export const RUN_TEMPLATES = [
  ['support', 'Run {}: list my open tickets and their priority.'],
  ['coding', 'Test run {} - summarize the failing tests in the payments module.'],
  ['finance', 'Batch {}: reconcile the card payments of the day.'],
  ['retail', 'Job {} started. Check the stock of the winter jackets.'],
  ['hr', 'Onboarding session {}: draft the welcome email for the new engineer.'],
];
