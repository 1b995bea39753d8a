/** Credentials inside `Sec-WebSocket-Protocol`: found by their place in the list, whatever they look like. */
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../../src/tape/redaction/redact.js';
import { protocolSecrets, redactProtocols } from '../../../src/tape/redaction/secret-protocols.js';

const R = (): string => '[REDACTED]';

describe('Sec-WebSocket-Protocol credentials', () => {
  it.each([
    // OpenAI Realtime from a browser: any key after the prefix (an ephemeral ek_ key, a project key, anything).
    ['realtime, openai-insecure-api-key.ek_68a1b2c3', 'realtime, openai-insecure-api-key.[REDACTED]'],
    ['realtime,openai-insecure-api-key.x', 'realtime,openai-insecure-api-key.[REDACTED]'],
    [
      'realtime, openai-insecure-api-key.sk-proj-abc, openai-organization.org-123, openai-project.proj_456, openai-beta.realtime-v1',
      'realtime, openai-insecure-api-key.[REDACTED], openai-organization.org-123, openai-project.proj_456, openai-beta.realtime-v1',
    ],
    // Deepgram: the entry after `token` (or `bearer`).
    ['token, 3f2a9c0d1e', 'token, [REDACTED]'],
    ['bearer, eyJhbGciOi.x.y', 'bearer, [REDACTED]'],
    // Kubernetes.
    [
      'base64url.bearer.authorization.k8s.io.ZXlKaGJH, base64.binary.k8s.io',
      'base64url.bearer.authorization.k8s.io.[REDACTED], base64.binary.k8s.io',
    ],
    // Two headers joined by a newline.
    ['realtime\nopenai-insecure-api-key.ek_1', 'realtime\nopenai-insecure-api-key.[REDACTED]'],
  ])('%s', (value, redacted) => {
    expect(redactProtocols(value, R)).toBe(redacted);
    expect(protocolSecrets(redacted)).toEqual([]);
    expect(protocolSecrets(value)).toHaveLength(1);
  });

  it.each([
    'realtime',
    'graphql-ws, graphql-transport-ws',
    'openai-organization.org-1, openai-project.proj_2',
    'mqtt',
    'openai-insecure-api-key.',
    'token',
  ])('%s holds none', (value) => {
    expect(redactProtocols(value, R)).toBe(value);
    expect(protocolSecrets(value)).toEqual([]);
  });

  it('the redactor replaces only the credential entry, on both sides of an exchange', () => {
    const r = createRedactor();
    expect(r.headers({ 'sec-websocket-protocol': 'realtime, openai-insecure-api-key.ek_1', 'openai-organization': 'org-1' })).toEqual({
      'sec-websocket-protocol': 'realtime, openai-insecure-api-key.[REDACTED]',
      'openai-organization': 'org-1',
    });
    const h = { 'sec-websocket-protocol': 'realtime' };
    expect(r.headers(h)).toBe(h);
  });
});
