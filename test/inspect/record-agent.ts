/**
 * Records a small agent run through the real proxy (startProxy + the scripted LLM upstream) for the inspect
 * tests: an OpenAI tool call with a `<rationale>` and its follow-up, a tool call with no stated reason, an
 * Anthropic streamed turn with a thinking block (stating an assumption) and a tool call, its follow-up, and a
 * failing call. Then replays part of it so a replay tape (one exact hit, one miss) exists too.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createLogger } from '../../src/log.js';
import { startProxy } from '../../src/front/server.js';
import { anthropicMessage, anthropicStream, lastUserText, openaiChat, startScriptedUpstream } from '../helpers/scripted-upstream.js';

export const GOAL = 'What is the weather and the time in Paris?';
export const RATIONALE = 'Only the weather tool knows current conditions.';
export const HUGE = 'lorem ipsum '.repeat(6000);
export const THINKING = 'I assume the user means Paris, France because no country was given.';

export async function recordAgentTapes(dir: string): Promise<{ tape: string; replay: string }> {
  const log = createLogger('silent');
  const upstream = await startScriptedUpstream((req) => {
    const body = req.body as { messages?: { role: string; content: unknown }[] };
    const text = lastUserText(body);
    const hasToolResult =
      JSON.stringify(body.messages ?? []).includes('tool_result') || (body.messages ?? []).some((m) => m.role === 'tool');
    if (req.url.startsWith('/v1/messages')) {
      if (hasToolResult) return anthropicMessage({ text: 'It is 14:00 in Paris, and 21°C.', usage: [60, 12] });
      return anthropicStream({
        thinking: THINKING,
        parts: ['Let me check ', 'the clock.'],
        toolUse: { id: 'toolu_1', name: 'get_time', jsonParts: ['{"tz":', '"Europe/Paris"}'] },
        usage: [40, 20],
      });
    }
    if (text.startsWith('break'))
      return { kind: 'json', status: 400, body: { error: { type: 'invalid_request_error', message: 'bad request on purpose' } } };
    if ((body.messages ?? []).filter((m) => m.role === 'tool').length === 1)
      return openaiChat({
        content: null,
        toolCalls: [{ id: 'call_2', name: 'lookup_city', arguments: '{"name":"Paris"}' }],
        usage: [30, 5],
      });
    if ((body.messages ?? []).filter((m) => m.role === 'tool').length === 2) return openaiChat({ content: 'Paris: 21°C.', usage: [50, 4] });
    return openaiChat({
      content: `<rationale>${RATIONALE}</rationale>`,
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      usage: [20, 10],
    });
  });
  const routes = [
    { prefix: '/openai', upstream: upstream.url },
    { prefix: '/anthropic', upstream: upstream.url },
  ];
  try {
    const rec = await startProxy({ mode: 'record', tape: 'agent', dir, port: 0, routes, log });
    await runAgent(rec.url);
    await rec.close();
    const rep = await startProxy({ mode: 'replay', tape: 'agent', dir, port: 0, routes, log, saveAs: 'agent-replay', onMiss: 'strict' });
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${rep.url}/openai/v1`, maxRetries: 0 });
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: GOAL }] });
    await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'never recorded' }] })
      .catch(() => undefined);
    await rep.close();
  } finally {
    await upstream.close();
  }
  return { tape: 'agent', replay: 'agent-replay' };
}

async function runAgent(url: string): Promise<void> {
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/openai/v1`, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: `${url}/anthropic`, maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: GOAL }];
  const first = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages });
  messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' });
  const second = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages });
  messages.push(second.choices[0]!.message, { role: 'tool', tool_call_id: 'call_2', content: '{"country":"FR"}' });
  await openai.chat.completions.create({ model: 'gpt-4o-mini', messages });
  // A failing call with a huge body (goes to a side file; the inspector shortens it and shows its size).
  await openai.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `break ${HUGE}` }] })
    .catch(() => undefined);

  const aMessages: Anthropic.MessageParam[] = [{ role: 'user', content: 'What time is it in Paris?' }];
  const turn = await anthropic.messages
    .stream({ model: 'claude-sonnet-4-6', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: aMessages })
    .finalMessage();
  aMessages.push(
    { role: 'assistant', content: turn.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '14:00' }] },
  );
  await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 2000, messages: aMessages });
}
