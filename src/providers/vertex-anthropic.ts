/**
 * Anthropic's models on Google Cloud Vertex AI (`@anthropic-ai/vertex-sdk`, `anthropic[vertex]`):
 * `POST .../projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict` (`:streamRawPredict` for a
 * stream). The body is the Messages API's without `model` (it is in the path) and with `anthropic_version`; answers
 * and streams are Anthropic's own, read by the Anthropic adapter. The credential is a Google access token (`ya29.`),
 * redacted as every `Authorization` is.
 */
import { anthropic } from './anthropic.js';
import { str } from './json.js';
import type { ProviderAdapter, ProviderInfo } from './types.js';

export const VERTEX: ProviderInfo = {
  name: 'vertex',
  route: { prefix: '/vertex', upstream: 'https://aiplatform.googleapis.com' },
  // Google's Gen AI SDKs on Vertex (`vertexai: true`) and the Anthropic Vertex SDKs take their base URL in code.
  otelName: 'gcp.vertex_ai',
};

const VERTEX_ANTHROPIC = /\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;

export const vertexAnthropic: ProviderAdapter = {
  ...anthropic,
  api: 'vertex-messages',
  provider: VERTEX,
  credentials: [{ env: ['GOOGLE_OAUTH_ACCESS_TOKEN'], header: 'authorization', scheme: 'bearer', elsewhere: true }],
  detect: ({ path, method }) => (method === 'POST' && VERTEX_ANTHROPIC.test(path) ? 'vertex' : undefined),
  describeRequest: (body, path) => {
    const m = VERTEX_ANTHROPIC.exec(path);
    return { model: m?.[1] ?? str(body.model), streamed: m?.[2] === 'streamRawPredict' || body.stream === true };
  },
  applyOverrides(body, path, o) {
    const { model, ...rest } = o;
    const out = anthropic.applyOverrides(body, path, rest, 'vertex');
    if (model !== undefined) {
      const from = VERTEX_ANTHROPIC.exec(path)?.[1];
      out.path = path.replace(/(\/publishers\/anthropic\/models\/)[^/:]+(:)/, `$1${model}$2`);
      if (from !== model) out.applied.model = { from, to: model };
    }
    return out;
  },
};
