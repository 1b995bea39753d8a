/** OpenAI's legacy text completions (`POST .../completions`, `prompt` in, `choices[].text` out), and compatible servers. */
import { answerError, isErrorEvent } from '../answer.js';
import { isObj, str } from '../json.js';
import { chatChunk, chatOverrides } from './openai-chat.js';
import { openaiDetector, openaiErrorBody, openaiUsage, OPENAI, OPENAI_CREDENTIALS, OPENAI_OTEL_PARAMS, azureModel } from './openai.js';
import type { ProviderAdapter } from '../types.js';

export const openaiCompletions: ProviderAdapter = {
  api: 'completions',
  provider: OPENAI,
  otelParams: OPENAI_OTEL_PARAMS,
  otelOperation: 'text_completion',
  paramKeys: ['temperature', 'top_p', 'max_tokens', 'seed', 'stop', 'n', 'presence_penalty', 'frequency_penalty'],
  credentials: OPENAI_CREDENTIALS,
  detect: openaiDetector(/\/completions$/),
  describeRequest: (body, path) => ({ model: azureModel(body, path), streamed: body.stream === true }),
  describeBody(answer, body) {
    const choice = Array.isArray(body.choices) && isObj(body.choices[0]) ? body.choices[0] : undefined;
    answer.text += str(choice?.text) ?? '';
    if (isObj(body.usage)) answer.usage = openaiUsage(body.usage);
  },
  describeEvent(answer, data, ev) {
    if (isErrorEvent(data, str(data.type) ?? ev.event)) return answerError(answer, data);
    chatChunk(answer, data);
  },
  // A prompt, not a conversation.
  conversation: () => [],
  errorBody: openaiErrorBody,
  applyOverrides: chatOverrides,
};
