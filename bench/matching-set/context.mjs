// Adversarial families about where and in what order things are said: swapped roles, identifiers in the user's own
// text, an earlier turn of a conversation, a changed tool result, and the request's parameters.
import { item, swap } from './build.mjs';
import { SYSTEM } from './frame.mjs';

const T = (lang, domain, template) => item(lang, domain, swap(template));

// ---- swapped roles: "from A to B" / "from B to A", "A owes B" / "B owes A" ----
const ROLES = [
  ['travel', 'Show me flights from {Boston to Denver|Denver to Boston} on Friday morning with a window seat and one checked bag.'],
  ['travel', 'How long does the train take from {Lyon to Geneva|Geneva to Lyon} on a weekday in the early afternoon?'],
  ['finance', 'Transfer 500 euros from the {savings account to the checking account|checking account to the savings account} today.'],
  ['finance', 'Convert 250 {dollars to euros|euros to dollars} at the rate the bank quoted this morning.'],
  ['coding', 'Migrate the users table from {MySQL to PostgreSQL|PostgreSQL to MySQL} without downtime for the checkout service.'],
  ['coding', 'Copy the files from the {staging bucket to the production bucket|production bucket to the staging bucket} after the review.'],
  ['coding', 'Merge {main into the feature branch|the feature branch into main} and resolve the conflicts in the router.'],
  ['law', 'The {landlord owes the tenant|tenant owes the landlord} two months of deposit. Explain the next steps.'],
  ['hr', 'In the new org chart the {manager reports to the director|director reports to the manager}. Update the diagram.'],
  ['retail', 'Can I exchange the {small shirt for a large one|large shirt for a small one} at the store downtown?'],
  ['finance', 'At closing the {buyer pays the seller|seller pays the buyer} the agency fee. Is that standard?'],
  ['support', 'Forward the ticket from {billing to support|support to billing} and notify the customer by email.'],
  ['travel', 'Is it cheaper to fly from {Madrid to Rome|Rome to Madrid} in November on a weekday?'],
  ['medicine', 'Switch the patient from {insulin glargine to insulin detemir|insulin detemir to insulin glargine} tonight.'],
  ['coding', 'Convert the timestamps in the report from {UTC to local time|local time to UTC} before exporting.'],
  ['coding', 'Rename the column from {user_id to account_id|account_id to user_id} in the migration.'],
  ['finance', 'Move the remaining budget from {marketing to research|research to marketing} next quarter.'],
  ['hr', 'Reassign the spare laptop from {the intern to the contractor|the contractor to the intern} on Monday.'],
  ['law', 'Under this agreement the {licensor grants the licensee|licensee grants the licensor} a perpetual right. Explain the risk.'],
  ['retail', 'Ship the parcel from {the warehouse to the store|the store to the warehouse} on Monday morning.'],
  ['travel', 'Book a taxi from {the hotel to the airport|the airport to the hotel} at six in the morning.'],
  ['support', 'Migrate the mailbox from {the old server to the new server|the new server to the old server} tonight.'],
  ['coding', 'In this code, does the {parent process wait for the child|child process wait for the parent} before exiting?'],
  ['finance', 'Did {revenue exceed costs|costs exceed revenue} in the third quarter of last year?'],
  ['hr', 'Can the {employee sue the employer|employer sue the employee} for this breach of contract?'],
  ['retail', 'Can I use the {gift card to pay for the voucher|voucher to pay for the gift card} at checkout?'],
  ['law', 'The {company indemnifies the contractor|contractor indemnifies the company} against third-party claims. Summarize it.'],
  ['travel', 'Change my seat from {economy to business|business to economy} on the return flight.'],
  ['coding', 'Write a function that maps the {keys to the values|values to the keys} of this dictionary.'],
  ['finance', 'Is the {euro stronger than the dollar|dollar stronger than the euro} this month?'],
  ['support', 'Who approves the request, {the team lead or the director|the director or the team lead}, when both are away?'],
];
const ROLES_OTHER = [
  ['de', 'travel', 'Der Zug fährt von {Berlin nach München|München nach Berlin} um neun Uhr. Wann kommt er an?'],
  ['de', 'finance', 'Überweise 500 Euro vom {Sparkonto auf das Girokonto|Girokonto auf das Sparkonto}.'],
  ['fr', 'travel', 'Combien de temps dure le trajet de {Lyon à Genève|Genève à Lyon} en train ?'],
  ['es', 'travel', '¿Cuánto tarda el tren de {Madrid a Sevilla|Sevilla a Madrid} por la tarde?'],
  ['it', 'travel', 'Quanto dura il viaggio da {Milano a Roma|Roma a Milano} in treno?'],
];

export function roleItems() {
  return [...ROLES.map(([d, t]) => T('en', d, t)), ...ROLES_OTHER.map(([l, d, t]) => T(l, d, t))];
}

// ---- identifiers in the user's own text: another order, another day, another request ----
const IDENTIFIERS = [
  [
    'support',
    'Cancel order {7f1c0a2e-1b2c-4d3e-8f9a-0b1c2d3e4f5a|9a8b7c6d-1b2c-4d3e-8f9a-0b1c2d3e4f5a} for the customer and refund the card.',
  ],
  ['hr', 'Move the meeting at {2026-03-04T10:00Z|2026-03-05T10:00Z} to the afternoon.'],
  ['hr', 'Move the meeting at {2026-03-04T10:00Z|2026-03-04T14:00Z} to the next day.'],
  ['support', 'Why did the job that started at {2026-01-12 08:15:00|2026-01-12 08:45:00} fail?'],
  ['coding', 'Show the logs for request {3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8|3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b9} in production.'],
  ['finance', 'Explain the charge made on {Mon, 02 Mar 2026 09:30:00 GMT|Tue, 03 Mar 2026 09:30:00 GMT} to my card.'],
  ['coding', 'Revert commit {a1b2c3d|a1b2c3e} on the release branch.'],
  ['support', 'Unblock the IP address {10.0.0.12|10.0.0.21} on the firewall.'],
  ['support', 'Look up ticket {SUP-1042|SUP-1024} and summarize it.'],
  ['coding', 'What changed between version {2.3.1|2.3.10} of the SDK?'],
  ['travel', 'Check in booking reference {QX7K2P|QX7K2R} for tomorrow.'],
  ['finance', 'Dispute the transaction at epoch {1709543400000|1709547000000} on the statement.'],
  ['support', 'Close the session {sess_9f8e7d6c5b4a|sess_1a2b3c4d5e6f} for the user.'],
  ['coding', 'Replay the event {evt_1NxYz2AbCdEf|evt_1NxYz2AbCdEg} in the webhook dashboard.'],
  ['hr', 'Move the alarm at {07:00:00|08:00:00} to Friday.'],
  ['hr', 'The interview is scheduled for {2026-03-04 10:00|2026-03-04 15:00}. Send the invite.'],
  ['retail', 'Where is parcel {1Z999AA10123456784|1Z999AA10123456785} right now?'],
  ['finance', 'Refund payment {pi_3MtwBwLkdIwHu7ix28a3tqPa|pi_3MtwBwLkdIwHu7ix28a3tqPb} in full.'],
  ['coding', 'Which pods run image {sha256:9f86d081884c|sha256:60303ae22b99}?'],
  ['support', 'Reset the MFA device of {user-4821|user-4812} and log the change.'],
];
const IDENTIFIERS_OTHER = [
  ['de', 'support', 'Storniere die Bestellung {7f1c0a2e-1b2c-4d3e-8f9a-0b1c2d3e4f5a|9a8b7c6d-1b2c-4d3e-8f9a-0b1c2d3e4f5a} für den Kunden.'],
  ['de', 'hr', 'Verschiebe das Treffen am {2026-03-04T10:00Z|2026-03-04T16:00Z} auf Freitag.'],
  ['fr', 'support', 'Annule la commande {7f1c0a2e-1b2c-4d3e-8f9a-0b1c2d3e4f5a|9a8b7c6d-1b2c-4d3e-8f9a-0b1c2d3e4f5a} du client.'],
  ['es', 'hr', 'Mueve la reunión del {2026-03-04T10:00Z|2026-03-05T10:00Z} a la tarde.'],
  ['ja', 'support', '注文{7f1c0a2e-1b2c-4d3e-8f9a-0b1c2d3e4f5a|9a8b7c6d-1b2c-4d3e-8f9a-0b1c2d3e4f5a}をキャンセルしてください。'],
];

export function identifierItems() {
  return [...IDENTIFIERS.map(([d, t]) => T('en', d, t)), ...IDENTIFIERS_OTHER.map(([l, d, t]) => T(l, d, t))];
}

// ---- an earlier turn of a conversation differs; the last turn is the same ----
const HISTORY = [
  [
    'en',
    'travel',
    'I am flying from {Boston to Denver|Denver to Boston} on Friday.',
    'Great, I noted your trip.',
    'What should I pack for the weather there?',
  ],
  ['en', 'travel', 'My budget is {$500|$5000} for the whole trip.', 'Understood.', 'Suggest a hotel for three nights.'],
  [
    'en',
    'medicine',
    'I am allergic to {peanuts|shellfish}.',
    'Thanks, I will keep that in mind.',
    'Suggest a snack for the afternoon break.',
  ],
  ['en', 'medicine', 'The patient {is|is not} pregnant.', 'Noted.', 'Is ibuprofen safe for her?'],
  ['en', 'hr', 'Employees {must|may} work from the office on Mondays.', 'Understood, that is the policy.', 'Draft the announcement email.'],
  ['en', 'finance', 'We sell to customers in {Germany|Austria}.', 'OK.', 'Which VAT rate applies to e-books?'],
  ['en', 'coding', 'Our app is written in {Python|Rust}.', 'Good to know.', 'How should we structure the tests?'],
  ['en', 'law', 'The contract was signed on {2024-01-15|2025-01-15}.', 'Noted.', 'When can we terminate it?'],
  ['en', 'travel', 'I have {two|three} children under five.', 'Thanks.', 'Which family ticket should I buy?'],
  ['en', 'hr', 'The meeting is {before|after} lunch.', 'Noted.', 'Write the calendar invite text.'],
  ['en', 'coding', 'Use the {staging|production} database.', 'OK, I will use that.', 'Delete the test users from it.'],
  ['en', 'coding', 'Sort the rows in {ascending|descending} order.', 'Sure.', 'Now show the first ten rows.'],
  ['en', 'travel', 'I live in {Portland, Oregon|Portland, Maine}.', 'Nice.', 'Which airports are closest to me?'],
  ['en', 'hr', 'My manager is {Hannah|Hanna}.', 'Noted.', 'Draft a note to my manager about the leave.'],
  ['en', 'finance', 'The invoice total is {1,250|1,520} euros.', 'Got it.', 'Write the payment reminder.'],
  ['en', 'support', 'What is the status of my refund?', 'Your refund was {approved|rejected} yesterday.', 'What happens next?'],
  ['en', 'retail', 'Can I return the shoes?', 'Yes, returns are {free|paid} for 30 days.', 'How do I start the return?'],
  ['en', 'travel', 'Is my flight on time?', 'Your flight is {on time|delayed by two hours}.', 'Should I leave for the airport now?'],
  ['en', 'coding', 'Run `rm -rf {./build|/build}` for me.', 'I cannot run commands, but here is what it does.', 'Is it safe?'],
  ['de', 'travel', 'Ich fliege am Freitag von {Berlin nach Wien|Wien nach Berlin}.', 'Notiert.', 'Was soll ich einpacken?'],
  ['de', 'medicine', 'Ich bin {nicht |}allergisch gegen Nüsse.', 'Danke.', 'Empfiehl mir einen Snack.'],
  ['fr', 'medicine', 'Je suis allergique aux {arachides|crustacés}.', 'Merci.', 'Propose-moi un en-cas.'],
  ['es', 'travel', 'Viajo de {Madrid a Roma|Roma a Madrid} el viernes.', 'Anotado.', '¿Qué debo llevar?'],
];

export function historyItems() {
  return HISTORY.map(([lang, domain, first, reply, last]) => {
    const conv = (text, answer) => ({
      system: SYSTEM[domain],
      turns: [
        { role: 'user', text },
        { role: 'assistant', text: answer },
        { role: 'user', text: last },
      ],
    });
    const [fa, fb] = /\{[^}]*\|/.test(first) ? swap(first) : [first, first];
    const [ra, rb] = /\{[^}]*\|/.test(reply) ? swap(reply) : [reply, reply];
    return { lang, a: conv(fa, ra), b: conv(fb, rb), note: `${fa} / ${fb}; ${ra} / ${rb}`.slice(0, 100), repeat: 4 };
  });
}

// ---- a tool's result changed ----
const RESULTS = [
  ['What is the status of order 1042?', 'get_order', { id: '1042' }, 'Order 1042: {shipped|cancelled} on 2026-03-02.'],
  ['What is the status of order 1042?', 'get_order', { id: '1042' }, { status: '{shipped|cancelled}', total: 42.5 }],
  ['How much is left on my gift card?', 'get_balance', { card: 'gift' }, { balance: '{120.50|210.50}', currency: 'EUR' }],
  ['Is the blue jacket in stock?', 'check_stock', { sku: 'JK-204' }, { available: '{true|false}' }],
  ['What is the weather in Oslo?', 'get_weather', { city: 'Oslo' }, 'The weather in Oslo is {sunny|rainy}, 4 C.'],
  ['Is meeting room A free at ten?', 'room_status', { room: 'A' }, 'Room A is {free|busy} at 10:00.'],
  ['What is my account balance?', 'get_balance', { account: 'main' }, 'Balance: {1,240.00|1,420.00} EUR'],
  ['Is alice an admin?', 'get_user', { user: 'alice' }, 'User alice {is|is not} an admin.'],
  ['Did the deployment work?', 'deploy_status', { env: 'prod' }, 'Deployment {succeeded|failed}.'],
  ['When does flight LH 400 leave?', 'flight_status', { flight: 'LH400' }, 'Flight LH 400 departs at {13:05|15:05}.'],
  ['What is the ACME share price?', 'quote', { ticker: 'ACME' }, 'The stock price of ACME is {52.10|25.10}.'],
  ['Can I see Dr. Weber on Monday?', 'availability', { doctor: 'weber' }, 'Dr. Weber is {available|on leave} on Monday.'],
  ['Find articles about refunds.', 'search_help', { q: 'refunds' }, 'Search returned {3|0} results.'],
  ['Save the draft.', 'save_file', { path: 'draft.md' }, '{File saved.|Permission denied.}'],
  ['Run the tests.', 'run_tests', { suite: 'unit' }, 'Test suite: {12 passed, 0 failed|11 passed, 1 failed}.'],
  ['What allergies does the patient have?', 'get_record', { patient: 'p-17' }, 'Allergies: {penicillin|none}.'],
  ['When does the contract end?', 'get_contract', { id: 'c-9' }, 'The contract {renews automatically|ends on 2026-06-30}.'],
  ['Where is my parcel?', 'track', { parcel: 'P-5521' }, 'Parcel {delivered to the front door|returned to sender}.'],
  ['Which region is the bucket in?', 'describe_bucket', { name: 'logs' }, { region: '{eu-west-1|us-east-1}' }],
  ['Who is on call this week?', 'oncall', { team: 'payments' }, 'On call: {Hannah|Hanna} from payments.'],
  ['Is the coupon valid?', 'check_coupon', { code: 'SPRING' }, 'The coupon is {valid|expired}.'],
  ['What did the linter say?', 'lint', { path: 'src' }, 'Lint: {0 errors|3 errors} in src/app.ts.'],
  ['Wie ist der Status der Bestellung 1042?', 'get_order', { id: '1042' }, 'Bestellung 1042 wurde {versandt|storniert}.'],
  ['Quel temps fait-il à Oslo ?', 'get_weather', { city: 'Oslo' }, 'Il fait {beau|pluvieux} à Oslo, 4 C.'],
];

export function toolResultItems() {
  return RESULTS.map(([question, name, args, result], k) => {
    const texts = typeof result === 'string' ? swap(result) : swap(JSON.stringify(result)).map((s) => JSON.parse(s));
    const conv = (r) => ({
      system: SYSTEM.support,
      turns: [
        { role: 'user', text: question },
        { role: 'assistant', call: { name, args }, id: `call_${k}` },
        { role: 'tool', name, result: r, id: `call_${k}` },
      ],
    });
    return {
      lang: /[äöüß]|Wie /.test(question) ? 'de' : /Quel/.test(question) ? 'fr' : 'en',
      a: conv(texts[0]),
      b: conv(texts[1]),
      note: `${name}: ${JSON.stringify(texts[0])} / ${JSON.stringify(texts[1])}`,
      repeat: 4,
    };
  });
}

// ---- parameters: the same text asked of another model, with other settings, tools or formats ----
const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

export const PARAMETER_CHANGES = {
  openai: [
    [{ model: 'gpt-4o' }, { model: 'gpt-4o-mini' }],
    [{ temperature: 0 }, { temperature: 0.7 }],
    [{ max_tokens: 100 }, { max_tokens: 1000 }],
    [{ seed: 1 }, { seed: 2 }],
    [{ top_p: 1 }, { top_p: 0.5 }],
    [{ tools: [WEATHER_TOOL] }, { tools: [WEATHER_TOOL, { type: 'function', function: { name: 'send_email', parameters: {} } }] }],
    [
      { tools: [WEATHER_TOOL], tool_choice: 'auto' },
      { tools: [WEATHER_TOOL], tool_choice: 'required' },
    ],
    [{ response_format: { type: 'text' } }, { response_format: { type: 'json_object' } }],
    [{ reasoning_effort: 'low' }, { reasoning_effort: 'high' }],
    [{ stop: ['\n'] }, { stop: ['END'] }],
    [{ n: 1 }, { n: 2 }],
    [{ logprobs: false }, { logprobs: true }],
  ],
  anthropic: [
    [{ model: 'claude-sonnet-4-5' }, { model: 'claude-haiku-4-5' }],
    [{ max_tokens: 1024 }, { max_tokens: 4096 }],
    [{ temperature: 0 }, { temperature: 1 }],
    [{ thinking: { type: 'enabled', budget_tokens: 1024 } }, { thinking: { type: 'enabled', budget_tokens: 4096 } }],
    [{ stop_sequences: ['END'] }, { stop_sequences: ['STOP'] }],
    [{ top_k: 5 }, { top_k: 50 }],
  ],
  responses: [
    [{ model: 'gpt-4.1' }, { model: 'gpt-4.1-mini' }],
    [{ temperature: 0 }, { temperature: 0.9 }],
    [{ reasoning: { effort: 'low' } }, { reasoning: { effort: 'high' } }],
    [{ max_output_tokens: 200 }, { max_output_tokens: 2000 }],
    [{ text: { format: { type: 'text' } } }, { text: { format: { type: 'json_object' } } }],
  ],
  gemini: [
    [{ temperature: 0 }, { temperature: 1 }],
    [{ maxOutputTokens: 100 }, { maxOutputTokens: 1000 }],
    [{ topK: 1 }, { topK: 40 }],
    [{ responseMimeType: 'text/plain' }, { responseMimeType: 'application/json' }],
  ],
  mcp: [
    [{ limit: 5 }, { limit: 6 }],
    [{ lang: 'en' }, { lang: 'de' }],
    [{ exact: true }, { exact: false }],
  ],
};

/** A system prompt changed by one word is a different request too. */
export const SYSTEM_CHANGES = [
  ['You are a helpful assistant. Answer in English.', 'You are a helpful assistant. Answer in German.'],
  ['You are a support agent. Never offer refunds.', 'You are a support agent. Always offer refunds.'],
  ['You are a tutor. Give the answer first, then the explanation.', 'You are a tutor. Give the explanation first, then the answer.'],
  ['You are a reviewer. Be strict.', 'You are a reviewer. Be lenient.'],
  ['Answer in at most 50 words.', 'Answer in at most 500 words.'],
  ['You must cite your sources.', 'You may cite your sources.'],
];
