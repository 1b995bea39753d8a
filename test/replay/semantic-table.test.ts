/**
 * The semantic matching contract as a table: pairs that mean the same thing must be served the recording, pairs
 * that mean something else must miss. Zero wrong matches: a match must also serve *the* recording, never a decoy.
 */
import { describe, expect, it } from 'vitest';
import { createReplayMatcher } from '../../src/replay/pipeline.js';
import type { IncomingRequest } from '../../src/replay/matcher.js';
import type { Exchange } from '../../src/tape/schema.js';
import { exchange } from '../inspect/exchanges.js';

type Api = 'openai' | 'anthropic' | 'mcp';
interface Case {
  name: string;
  api: Api;
  recorded: unknown;
  incoming: unknown;
  /** exact / normalised / similarity: must be served the recording by that stage; miss: must not be served anything. */
  expect: 'exact' | 'normalised' | 'similarity' | 'miss';
  /** A side-effect tool: semantic matching is off for it. */
  sideEffect?: boolean;
  /** More recordings on the tape, after the one that must be served. */
  also?: unknown[];
}

const user = (content: string) => ({ role: 'user', content });
const system = (content: string) => ({ role: 'system', content });
const chat = (messages: unknown[], extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o', temperature: 0, messages, ...extra });
const ask = (text: string, extra: Record<string, unknown> = {}) => chat([system('You are a helpful assistant.'), user(text)], extra);
const claude = (messages: unknown[], extra: Record<string, unknown> = {}) => ({
  model: 'claude-haiku-4-5',
  max_tokens: 1024,
  messages,
  ...extra,
});
const claudeAsk = (text: string, extra: Record<string, unknown> = {}) => claude([user(text)], extra);
const call = (name: string, args: unknown, id: number | string = 1, meta?: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});
const weatherTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const toolTurn = (callId: string, city: string) =>
  chat(
    [
      user(`What is the weather in ${city}?`),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city }) } }],
      },
      { role: 'tool', tool_call_id: callId, content: '{"temp_c": 21, "sky": "clear"}' },
    ],
    { tools: [weatherTool] },
  );
const longSystem =
  'You are the booking assistant of a restaurant group. Answer briefly, confirm every detail back to the guest, and never invent availability. '.repeat(
    4,
  );

const CASES: Case[] = [
  // ---- same meaning: served ----
  {
    name: 'whitespace',
    api: 'openai',
    recorded: ask('What is the capital of France?'),
    incoming: ask('  What is   the capital\nof France? '),
    expect: 'normalised',
  },
  {
    name: 'letter case',
    api: 'openai',
    recorded: ask('What is the capital of France?'),
    incoming: ask('what is the capital of france?'),
    expect: 'normalised',
  },
  {
    name: 'punctuation',
    api: 'openai',
    recorded: ask('Summarize the report, please.'),
    incoming: ask('Summarize the report please'),
    expect: 'normalised',
  },
  {
    name: 'JSON key order',
    api: 'openai',
    recorded: ask('Hello there'),
    incoming: { messages: ask('Hello there').messages, temperature: 0, model: 'gpt-4o' },
    expect: 'exact',
  },
  {
    name: 'ISO timestamp in the system prompt',
    api: 'openai',
    recorded: chat([system('Current time: 2026-11-22T18:35:31Z. You help with travel.'), user('Plan a day in Lisbon')]),
    incoming: chat([system('Current time: 2026-11-23T09:01:02.125Z. You help with travel.'), user('Plan a day in Lisbon')]),
    expect: 'normalised',
  },
  {
    name: 'UUID in the system prompt',
    api: 'openai',
    recorded: chat([system('Session 3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8. You help with support.'), user('list my open tickets')]),
    incoming: chat([system('Session 0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d. You help with support.'), user('list my open tickets')]),
    expect: 'normalised',
  },
  {
    name: 'request id nonce in the prompt',
    api: 'openai',
    recorded: ask('request_id: a8f3k2m9q7 Check the deploy status'),
    incoming: ask('request_id: z1x2c3v4b5n6 Check the deploy status'),
    expect: 'normalised',
  },
  {
    name: '`user` field',
    api: 'openai',
    recorded: ask('Tell me a joke', { user: 'alice' }),
    incoming: ask('Tell me a joke', { user: 'bob' }),
    expect: 'normalised',
  },
  {
    name: 'per-request metadata',
    api: 'openai',
    recorded: ask('Tell me a joke', { metadata: { run: '1' }, store: true }),
    incoming: ask('Tell me a joke', { metadata: { run: '2' } }),
    expect: 'normalised',
  },
  {
    name: 'tool call ids in the history',
    api: 'openai',
    recorded: toolTurn('call_AbC123xyz', 'Paris'),
    incoming: toolTurn('call_QrS987uvw', 'Paris'),
    expect: 'normalised',
  },
  {
    name: 'stream vs not (the answer is converted to the shape asked for)',
    api: 'openai',
    recorded: ask('Name three rivers'),
    incoming: ask('Name three rivers', { stream: true, stream_options: { include_usage: true } }),
    expect: 'normalised',
  },
  {
    name: 'contraction',
    api: 'openai',
    recorded: ask("What's the weather like?"),
    incoming: ask('What is the weather like?'),
    expect: 'normalised',
  },
  {
    name: 'spelling variant',
    api: 'openai',
    recorded: ask('Please summarise the following meeting notes for the team'),
    incoming: ask('Please summarize the following meeting notes for the team'),
    expect: 'similarity',
  },
  {
    name: 'politeness word',
    api: 'openai',
    recorded: ask('Could you please list the open pull requests in the repository'),
    incoming: ask('Could you list the open pull requests in the repository'),
    expect: 'similarity',
  },
  {
    name: 'Anthropic whitespace and case',
    api: 'anthropic',
    recorded: claude([user('Explain recursion simply')], { system: 'You teach programming.' }),
    incoming: claude([user('explain  recursion simply.')], { system: 'You teach programming.' }),
    expect: 'normalised',
  },
  {
    name: 'Anthropic tool_use ids',
    api: 'anthropic',
    recorded: claude([
      user('Weather in Oslo?'),
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01AbCdEfGh', name: 'get_weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01AbCdEfGh', content: 'sunny, 4 C' }] },
    ]),
    incoming: claude([
      user('Weather in Oslo?'),
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_09ZyXwVuTs', name: 'get_weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_09ZyXwVuTs', content: 'sunny, 4 C' }] },
    ]),
    expect: 'normalised',
  },
  {
    name: 'Anthropic stream vs not',
    api: 'anthropic',
    recorded: claudeAsk('Explain DNS', { stream: true }),
    incoming: claudeAsk('Explain DNS'),
    expect: 'normalised',
  },
  {
    name: 'Anthropic metadata.user_id',
    api: 'anthropic',
    recorded: claudeAsk('Name a prime', { metadata: { user_id: 'u-1' } }),
    incoming: claudeAsk('Name a prime', { metadata: { user_id: 'u-2' } }),
    expect: 'normalised',
  },
  {
    name: 'Anthropic article dropped',
    api: 'anthropic',
    recorded: claudeAsk('Write a short poem about the autumn leaves falling in the park'),
    incoming: claudeAsk('Write a short poem about autumn leaves falling in the park'),
    expect: 'similarity',
  },
  {
    name: 'Anthropic Date string in the system prompt',
    api: 'anthropic',
    recorded: claudeAsk('Greet the user', { system: 'Now: Sun Nov 22 2026 18:35:31 GMT+0000 (Coordinated Universal Time)' }),
    incoming: claudeAsk('Greet the user', { system: 'Now: Mon Nov 23 2026 07:02:11 GMT+0000 (Coordinated Universal Time)' }),
    expect: 'normalised',
  },
  {
    name: 'Anthropic system blocks with cache_control',
    api: 'anthropic',
    recorded: claudeAsk('Hi', { system: [{ type: 'text', text: 'Be terse.', cache_control: { type: 'ephemeral' } }] }),
    incoming: claudeAsk('Hi', { system: [{ type: 'text', text: 'Be terse.' }] }),
    expect: 'normalised',
  },
  {
    name: 'MCP JSON-RPC id and _meta',
    api: 'mcp',
    recorded: call('search', { query: 'mcp spec' }, 1, { progressToken: 1 }),
    incoming: call('search', { query: 'mcp spec' }, 'abc', { progressToken: 'p-9' }),
    expect: 'exact',
  },
  {
    name: 'MCP argument key order',
    api: 'mcp',
    recorded: call('search', { query: 'mcp', limit: 5 }),
    incoming: call('search', { limit: 5, query: 'mcp' }),
    expect: 'exact',
  },
  {
    name: 'MCP address with its region',
    api: 'mcp',
    recorded: call('get_weather', { address: '10 Downing Street, London' }),
    incoming: call('get_weather', { address: '10 Downing Street, London, UK' }),
    expect: 'similarity',
  },
  {
    name: 'MCP address with state and zip',
    api: 'mcp',
    recorded: call('geocode', { address: '1600 Amphitheatre Parkway, Mountain View, CA 94043' }),
    incoming: call('geocode', { address: '1600 Amphitheatre Parkway, Mountain View' }),
    expect: 'similarity',
  },
  {
    name: 'MCP query case and punctuation',
    api: 'mcp',
    recorded: call('search', { query: 'Latest news about renewable energy' }),
    incoming: call('search', { query: 'latest news about renewable energy?' }),
    expect: 'normalised',
  },
  {
    name: 'spelling variant in a long request',
    api: 'openai',
    recorded: ask('Please analyse the quarterly sales figures for every region and highlight where the numbers fell short of the plan'),
    incoming: ask('Please analyze the quarterly sales figures for every region and highlight where the numbers fell short of the plan'),
    expect: 'similarity',
  },
  {
    name: 'closing politeness dropped',
    api: 'openai',
    recorded: ask('Check the deployment logs for errors, thanks'),
    incoming: ask('Check the deployment logs for errors'),
    expect: 'similarity',
  },
  {
    name: 'Anthropic British and American spelling',
    api: 'anthropic',
    recorded: claudeAsk('Colour the chart bars by region in the sales dashboard'),
    incoming: claudeAsk('Color the chart bars by region in the sales dashboard'),
    expect: 'similarity',
  },
  {
    name: 'MCP query spelling variant',
    api: 'mcp',
    recorded: call('search', { query: 'how to organise a team offsite for a remote engineering group' }),
    incoming: call('search', { query: 'how to organize a team offsite for a remote engineering group' }),
    expect: 'similarity',
  },
  {
    name: 'known spelling variant: centre / center',
    api: 'openai',
    recorded: ask('Please list the opening hours of the city centre library for the next visit'),
    incoming: ask('Please list the opening hours of the city center library for the next visit'),
    expect: 'similarity',
  },
  {
    name: 'a request frame: could you',
    api: 'openai',
    recorded: ask('Could you list the open pull requests in the repository'),
    incoming: ask('List the open pull requests in the repository'),
    expect: 'similarity',
  },
  {
    name: 'the tape shows an identifier varying between runs',
    api: 'openai',
    recorded: ask('Run 3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8: list my open tickets'),
    incoming: ask('Run 0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d: list my open tickets'),
    expect: 'normalised',
    also: [
      ask('Run 3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8: close ticket 5'),
      ask('Run 5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b: list my open tickets'),
      ask('Run 5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b: close ticket 5'),
    ],
  },
  {
    name: 'two recordings that differ in an identifier only they carry are two requests, not noise',
    api: 'openai',
    recorded: ask('Cancel order 7f1c0a2e-1b2c-4d3e-8f9a-0b1c2d3e4f5a for the customer'),
    incoming: ask('Cancel order 9a8b7c6d-1b2c-4d3e-8f9a-0b1c2d3e4f5a for the customer'),
    expect: 'miss',
    also: [ask('Cancel order 5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b for the customer')],
  },
  {
    name: 'an identifier the tape shows varying, with another that does not',
    api: 'openai',
    recorded: ask('Run 3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8: cancel order 7f1c0a2e-1b2c-4d3e-8f9a-0b1c2d3e4f5a'),
    incoming: ask('Run 0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d: cancel order 9a8b7c6d-1b2c-4d3e-8f9a-0b1c2d3e4f5a'),
    expect: 'miss',
    also: [
      ask('Run 3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8: close ticket 5'),
      ask('Run 5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b: cancel order 7f1c0a2e-1b2c-4d3e-8f9a-0b1c2d3e4f5a'),
      ask('Run 5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b: close ticket 5'),
    ],
  },
  {
    name: 'MCP nonce argument',
    api: 'mcp',
    recorded: call('search', { query: 'status page', request_id: 'r-1a2b3c' }),
    incoming: call('search', { query: 'status page', request_id: 'r-9z8y7x' }),
    expect: 'normalised',
  },

  // ---- different meaning: never served ----
  {
    name: "UUID in the user's own text",
    api: 'openai',
    recorded: ask('Cancel order 7f1c0a2e-1b2c-4d3e-8f9a-0b1c2d3e4f5a for the customer'),
    incoming: ask('Cancel order 9a8b7c6d-1b2c-4d3e-8f9a-0b1c2d3e4f5a for the customer'),
    expect: 'miss',
  },
  {
    name: "timestamp with a time of day in the user's own text",
    api: 'anthropic',
    recorded: claudeAsk('Move the meeting at 2026-03-04T10:00Z to the afternoon'),
    incoming: claudeAsk('Move the meeting at 2026-03-05T10:00Z to the afternoon'),
    expect: 'miss',
  },
  {
    name: 'modal verb',
    api: 'openai',
    recorded: ask('Users must reset their password every 90 days. Explain the policy.'),
    incoming: ask('Users can reset their password every 90 days. Explain the policy.'),
    expect: 'miss',
  },
  {
    name: 'words a few letters apart are not spelling variants',
    api: 'openai',
    recorded: ask('Explain why patients with hyperglycemia feel thirsty after meals'),
    incoming: ask('Explain why patients with hypoglycemia feel thirsty after meals'),
    expect: 'miss',
  },
  {
    name: 'a path in a shell command',
    api: 'openai',
    recorded: ask('Explain what rm -rf ./build does in the project folder'),
    incoming: ask('Explain what rm -rf /build does in the project folder'),
    expect: 'miss',
  },
  {
    name: 'an operator in a formula',
    api: 'anthropic',
    recorded: claudeAsk('What is 5 * 5 in the spreadsheet formula?'),
    incoming: claudeAsk('What is 5 / 5 in the spreadsheet formula?'),
    expect: 'miss',
  },
  {
    name: 'a regex quantifier in inline code',
    api: 'openai',
    recorded: ask('Does the regex `\\d{3}` match the order number?'),
    incoming: ask('Does the regex `\\d{3,}` match the order number?'),
    expect: 'miss',
  },
  {
    name: 'AND vs OR in a query',
    api: 'openai',
    recorded: ask("Explain SELECT * FROM invoices WHERE due < now() AND status = 'unpaid'"),
    incoming: ask("Explain SELECT * FROM invoices WHERE due < now() OR status = 'unpaid'"),
    expect: 'miss',
  },
  {
    name: 'active and passive voice',
    api: 'anthropic',
    recorded: claudeAsk('Explain why the contractor was paid before the inspection of the roof'),
    incoming: claudeAsk('Explain why the contractor paid before the inspection of the roof'),
    expect: 'miss',
  },
  {
    name: 'a preposition replaced',
    api: 'openai',
    recorded: ask('Summarize the report written by the finance team'),
    incoming: ask('Summarize the report written for the finance team'),
    expect: 'miss',
  },
  { name: 'different number', api: 'openai', recorded: ask('What is 2 + 2?'), incoming: ask('What is 2 + 3?'), expect: 'miss' },
  {
    name: 'different number in a long conversation',
    api: 'openai',
    recorded: chat([system(longSystem), user('Book a table for 4 people at 7pm on the terrace, please')]),
    incoming: chat([system(longSystem), user('Book a table for 5 people at 7pm on the terrace, please')]),
    expect: 'miss',
  },
  {
    name: 'different named entity',
    api: 'openai',
    recorded: ask('What is the capital of France?'),
    incoming: ask('What is the capital of Spain?'),
    expect: 'miss',
  },
  {
    name: 'different entity in lower case',
    api: 'openai',
    recorded: ask('weather in paris today'),
    incoming: ask('weather in rome today'),
    expect: 'miss',
  },
  {
    name: 'negation',
    api: 'openai',
    recorded: ask('Is it safe to drink the tap water in the hotel'),
    incoming: ask('Is it not safe to drink the tap water in the hotel'),
    expect: 'miss',
  },
  {
    name: 'negation by contraction',
    api: 'openai',
    recorded: ask('I want the summary to include the appendix of the report'),
    incoming: ask("I don't want the summary to include the appendix of the report"),
    expect: 'miss',
  },
  {
    name: 'quantity word',
    api: 'openai',
    recorded: ask('List three colors used in the logo'),
    incoming: ask('List five colors used in the logo'),
    expect: 'miss',
  },
  {
    name: 'all vs some',
    api: 'openai',
    recorded: ask('Summarize all open issues in the tracker'),
    incoming: ask('Summarize some open issues in the tracker'),
    expect: 'miss',
  },
  {
    name: 'different model',
    api: 'openai',
    recorded: ask('Hello', { model: 'gpt-4o' }),
    incoming: ask('Hello', { model: 'gpt-4o-mini' }),
    expect: 'miss',
  },
  {
    name: 'different temperature',
    api: 'openai',
    recorded: ask('Write a tagline', { temperature: 0 }),
    incoming: ask('Write a tagline', { temperature: 0.7 }),
    expect: 'miss',
  },
  {
    name: 'different seed',
    api: 'openai',
    recorded: ask('Write a tagline', { seed: 1 }),
    incoming: ask('Write a tagline', { seed: 2 }),
    expect: 'miss',
  },
  {
    name: 'different tools list',
    api: 'openai',
    recorded: ask('Weather?', { tools: [weatherTool] }),
    incoming: ask('Weather?', { tools: [weatherTool, { type: 'function', function: { name: 'send_email', parameters: {} } }] }),
    expect: 'miss',
  },
  {
    name: 'different tool schema',
    api: 'openai',
    recorded: ask('Weather?', { tools: [weatherTool] }),
    incoming: ask('Weather?', {
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: { type: 'object', properties: { city: { type: 'string' }, units: { type: 'string' } } },
          },
        },
      ],
    }),
    expect: 'miss',
  },
  {
    name: 'different tool_choice',
    api: 'openai',
    recorded: ask('Weather?', { tools: [weatherTool], tool_choice: 'auto' }),
    incoming: ask('Weather?', { tools: [weatherTool], tool_choice: 'required' }),
    expect: 'miss',
  },
  {
    name: 'different response_format',
    api: 'openai',
    recorded: ask('List fruits', { response_format: { type: 'text' } }),
    incoming: ask('List fruits', { response_format: { type: 'json_object' } }),
    expect: 'miss',
  },
  {
    name: 'different reasoning effort',
    api: 'openai',
    recorded: ask('Prove it', { reasoning_effort: 'low' }),
    incoming: ask('Prove it', { reasoning_effort: 'high' }),
    expect: 'miss',
  },
  {
    name: 'reversed question',
    api: 'openai',
    recorded: ask('Is coffee better than tea for focus?'),
    incoming: ask('Is tea better than coffee for focus?'),
    expect: 'miss',
  },
  {
    name: 'different date',
    api: 'openai',
    recorded: ask('What happened on 2024-05-01 in the logs?'),
    incoming: ask('What happened on 2024-05-02 in the logs?'),
    expect: 'miss',
  },
  {
    name: 'different weekday',
    api: 'openai',
    recorded: ask('schedule the review meeting for monday morning'),
    incoming: ask('schedule the review meeting for tuesday morning'),
    expect: 'miss',
  },
  {
    name: 'different question word',
    api: 'openai',
    recorded: ask('When was the Eiffel Tower built?'),
    incoming: ask('Why was the Eiffel Tower built?'),
    expect: 'miss',
  },
  {
    name: 'direction swapped',
    api: 'openai',
    recorded: ask('Show flights to Boston from Denver tomorrow'),
    incoming: ask('Show flights from Boston to Denver tomorrow'),
    expect: 'miss',
  },
  {
    name: 'TV vs money',
    api: 'openai',
    recorded: ask('How much does a TV cost?'),
    incoming: ask('How much money does it cost?'),
    expect: 'miss',
  },
  {
    name: 'synonym in a short prompt',
    api: 'openai',
    recorded: ask('Write a haiku about the sea'),
    incoming: ask('Write a haiku about the ocean'),
    expect: 'miss',
  },
  {
    name: 'singular vs plural',
    api: 'openai',
    recorded: ask('Show the open issue'),
    incoming: ask('Show the open issues'),
    expect: 'miss',
  },
  {
    name: 'same text, different role',
    api: 'openai',
    recorded: chat([system('Reply in French')]),
    incoming: chat([user('Reply in French')]),
    expect: 'miss',
  },
  {
    name: 'extra message',
    api: 'openai',
    recorded: chat([user('Hi')]),
    incoming: chat([user('Hi'), { role: 'assistant', content: 'Hello!' }, user('Hi')]),
    expect: 'miss',
  },
  {
    name: 'different tool result',
    api: 'openai',
    recorded: toolTurn('call_1', 'Paris'),
    incoming: chat(
      [
        user('What is the weather in Paris?'),
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_2', content: '{"temp_c": 5, "sky": "clear"}' },
      ],
      { tools: [weatherTool] },
    ),
    expect: 'miss',
  },
  // One word that carries meaning, replaced or added, in a request long enough that it costs less than 1 - 0.85.
  {
    name: 'different word in a long request',
    api: 'openai',
    recorded: ask('Write a python function that parses the csv file and returns the rows as a list of dictionaries with typed values'),
    incoming: ask('Write a rust function that parses the csv file and returns the rows as a list of dictionaries with typed values'),
    expect: 'miss',
  },
  {
    name: 'different adjective in a long request',
    api: 'openai',
    recorded: ask(
      'Please write a long and detailed summary of the attached report for the executive team meeting on product strategy and roadmap',
    ),
    incoming: ask(
      'Please write a short and detailed summary of the attached report for the executive team meeting on product strategy and roadmap',
    ),
    expect: 'miss',
  },
  {
    name: 'word added to a request',
    api: 'openai',
    recorded: ask('Write a short poem about the autumn leaves falling in the park'),
    incoming: ask('Write a short sad poem about the autumn leaves falling in the park'),
    expect: 'miss',
  },
  {
    name: 'Anthropic different word in a long request',
    api: 'anthropic',
    recorded: claudeAsk('I am allergic to peanuts so please suggest a healthy snack I can bring to the office for the afternoon break'),
    incoming: claudeAsk('I am allergic to shellfish so please suggest a healthy snack I can bring to the office for the afternoon break'),
    expect: 'miss',
  },
  {
    name: 'MCP different word in a long query',
    api: 'mcp',
    recorded: call('search', {
      query: 'step by step guide to configure an nginx reverse proxy with tls certificates from letsencrypt on an ubuntu server',
    }),
    incoming: call('search', {
      query: 'step by step guide to configure an apache reverse proxy with tls certificates from letsencrypt on an ubuntu server',
    }),
    expect: 'miss',
  },
  {
    name: 'Anthropic different language',
    api: 'anthropic',
    recorded: claudeAsk('Translate "good morning" to French'),
    incoming: claudeAsk('Translate "good morning" to German'),
    expect: 'miss',
  },
  {
    name: 'Anthropic thinking budget',
    api: 'anthropic',
    recorded: claudeAsk('Solve it', { thinking: { type: 'enabled', budget_tokens: 1024 } }),
    incoming: claudeAsk('Solve it', { thinking: { type: 'enabled', budget_tokens: 4096 } }),
    expect: 'miss',
  },
  {
    name: 'Anthropic max_tokens',
    api: 'anthropic',
    recorded: claudeAsk('Solve it', { max_tokens: 100 }),
    incoming: claudeAsk('Solve it', { max_tokens: 200 }),
    expect: 'miss',
  },
  {
    name: 'Anthropic negation',
    api: 'anthropic',
    recorded: claudeAsk('Should I include the tests in the release notes'),
    incoming: claudeAsk('Should I never include the tests in the release notes'),
    expect: 'miss',
  },
  {
    name: 'MCP different city',
    api: 'mcp',
    recorded: call('get_weather', { city: 'Paris' }),
    incoming: call('get_weather', { city: 'London' }),
    expect: 'miss',
  },
  {
    name: 'MCP city vs city with a state',
    api: 'mcp',
    recorded: call('get_weather', { city: 'Paris' }),
    incoming: call('get_weather', { city: 'Paris, Texas' }),
    expect: 'miss',
  },
  {
    name: 'MCP different number argument',
    api: 'mcp',
    recorded: call('search', { query: 'mcp', limit: 5 }),
    incoming: call('search', { query: 'mcp', limit: 6 }),
    expect: 'miss',
  },
  {
    name: 'MCP different tool',
    api: 'mcp',
    recorded: call('search', { query: 'mcp' }),
    incoming: call('search_code', { query: 'mcp' }),
    expect: 'miss',
  },
  {
    name: 'MCP extra argument',
    api: 'mcp',
    recorded: call('search', { query: 'mcp' }),
    incoming: call('search', { query: 'mcp', lang: 'en' }),
    expect: 'miss',
  },
  {
    name: 'MCP number vs string argument',
    api: 'mcp',
    recorded: call('get_order', { id: 1234 }),
    incoming: call('get_order', { id: '1234' }),
    expect: 'miss',
  },
  {
    name: 'MCP file path case',
    api: 'mcp',
    recorded: call('read_file', { path: '/tmp/Notes.txt' }),
    incoming: call('read_file', { path: '/tmp/notes.txt' }),
    expect: 'miss',
  },
  {
    name: 'MCP side-effect tool: exact or nothing',
    api: 'mcp',
    recorded: call('send_email', { to: 'a@example.com', body: 'Hello Bob' }),
    incoming: call('send_email', { to: 'a@example.com', body: 'hello bob' }),
    expect: 'miss',
    sideEffect: true,
  },
];

const WHERE: Record<Api, { route: string; path: string }> = {
  openai: { route: '/openai', path: '/v1/chat/completions' },
  anthropic: { route: '/anthropic', path: '/v1/messages' },
  mcp: { route: '/mcp', path: '/' },
};

function recording(api: Api, body: unknown): Exchange {
  return exchange({ offsetMs: 0, body, response: { ok: true }, ...WHERE[api] });
}

function incoming(api: Api, body: unknown): IncomingRequest {
  return { route: WHERE[api].route, request: { method: 'POST', path: WHERE[api].path, query: [], body: { kind: 'json', json: body } } };
}

/** A recording in the same bucket that must never be served instead (a different question). */
function decoy(c: Case): Exchange {
  const swap = (v: unknown, key = ''): unknown => {
    if (typeof v === 'string') return ['content', 'text', 'query', 'address', 'city'].includes(key) ? `${v} 42 Zanzibar` : v;
    if (Array.isArray(v)) return v.map((x) => swap(x, key));
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x, k)]));
  };
  return recording(c.api, swap(c.recorded));
}

describe('semantic matching table', () => {
  it('has at least 40 pairs, half matching and half not, across OpenAI, Anthropic and MCP', () => {
    const served = CASES.filter((c) => c.expect !== 'miss');
    const missed = CASES.filter((c) => c.expect === 'miss');
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    expect(served.length).toBeGreaterThanOrEqual(20);
    expect(missed.length).toBeGreaterThanOrEqual(20);
    for (const api of ['openai', 'anthropic', 'mcp'] as const) {
      expect(served.some((c) => c.api === api)).toBe(true);
      expect(missed.some((c) => c.api === api)).toBe(true);
    }
  });

  it.each(CASES)('$api: $name -> $expect', async (c) => {
    const target = recording(c.api, c.recorded);
    const matcher = createReplayMatcher([decoy(c), target, ...(c.also ?? []).map((b) => recording(c.api, b)), decoy(c)]);
    const outcome = await matcher.match(incoming(c.api, c.incoming), { allowSemantic: c.sideEffect !== true });
    if (c.expect === 'miss') {
      expect(outcome.kind, outcome.kind === 'miss' ? '' : `wrongly served #${outcome.exchange.id}: ${outcome.explanation}`).toBe('miss');
      return;
    }
    expect(outcome.kind, outcome.kind === 'miss' ? outcome.explanation : '').not.toBe('miss');
    if (outcome.kind === 'miss') return;
    expect(outcome.exchange.id).toBe(target.id);
    expect(outcome.stage).toBe(c.expect);
    if (c.expect === 'similarity') expect(outcome.score).toBeGreaterThanOrEqual(0.85);
  });

  it("says in a match's reason which per-run values were set aside", async () => {
    const target = recording(
      'openai',
      chat([system('Current time: 2026-11-22T18:35:31Z. You help with travel.'), user('Plan a day in Lisbon')]),
    );
    const req = chat([system('Current time: 2026-11-23T09:01:02.125Z. You help with travel.'), user('Plan a day in Lisbon')]);
    const outcome = await createReplayMatcher([target]).match(incoming('openai', { ...req, user: 'bob' }));
    expect(outcome.kind).toBe('semantic');
    expect(outcome.explanation).toContain(
      'set aside: a clock at messages[0].content (system prompt): "2026-11-23T09:01:02.125Z" (recorded "2026-11-22T18:35:31Z"); `user`',
    );
  });

  it('says which identifier the tape shows varying when it sets one aside', async () => {
    const first = recording('openai', ask('Run 3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8: list my open tickets'));
    const second = recording('openai', ask('Run 5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b: list my open tickets'));
    const others = ['3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8', '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b'].map((run) =>
      recording('openai', ask(`Run ${run}: close ticket 5`)),
    );
    const outcome = await createReplayMatcher([first, second, ...others]).match(
      incoming('openai', ask('Run 0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d: list my open tickets')),
    );
    expect(outcome.kind).toBe('semantic');
    expect(outcome.explanation).toContain(
      `a UUID at messages[1].content: "0b1c2d3e…" (recorded "3f2a9c1e…"; it varies between recordings #${first.id}, #${second.id} on this tape)`,
    );
  });
});
