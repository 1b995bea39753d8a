/** OpenAI embeddings (`POST .../embeddings`), and compatible servers: no answer text, only usage. */
import { answerError, isErrorEvent } from '../answer.js';
import { isObj, str } from '../json.js';
import { chatOverrides } from './openai-chat.js';
import { openaiDetector, openaiErrorBody, openaiUsage, OPENAI, OPENAI_CREDENTIALS, azureModel } from './openai.js';
import type { ProviderAdapter } from '../types.js';

export const openaiEmbeddings: ProviderAdapter = {
  api: 'embeddings',
  provider: OPENAI,
  otelOperation: 'embeddings',
  credentials: OPENAI_CREDENTIALS,
  detect: openaiDetector(/\/embeddings$/),
  describeRequest: (body, path) => ({ model: azureModel(body, path), streamed: body.stream === true }),
  describeBody(answer, body) {
    if (isObj(body.usage)) answer.usage = openaiUsage(body.usage);
  },
  describeEvent(answer, data, ev) {
    if (isErrorEvent(data, str(data.type) ?? ev.event)) answerError(answer, data);
  },
  conversation: () => [],
  errorBody: openaiErrorBody,
  applyOverrides: chatOverrides,
};
