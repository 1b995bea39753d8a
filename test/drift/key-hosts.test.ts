/** Where drift may send a key (src/drift/key-hosts.ts), judged on the URL a call would go to; nothing is sent here. */
import { describe, expect, it } from 'vitest';
import { keyDestination, parseAllowedHost, type KeyDestinations } from '../../src/drift/key-hosts.js';
import { OPENAI_CREDENTIALS } from '../../src/providers/openai/openai.js';
import type { Exchange } from '../../src/tape/schema.js';

const [bearer, azure] = OPENAI_CREDENTIALS;

function call(upstream: string, path = '/v1/chat/completions', route = '/openai'): [Exchange, { prefix: string; upstream: string }] {
  const ex: Exchange = {
    type: 'exchange',
    id: '000000',
    seq: 0,
    startedAt: new Date(0).toISOString(),
    offsetMs: 0,
    transport: 'http',
    route,
    upstream,
    request: { method: 'POST', path, query: [], headers: { authorization: '[REDACTED]' }, body: { kind: 'empty' } },
    timing: { durationMs: 1 },
    llm: { provider: 'openai', api: 'chat.completions', params: {}, streamed: false, toolCalls: [] },
  };
  return [ex, { prefix: route, upstream }];
}

const none: KeyDestinations = { given: new Map(), allowed: [] };
const ok = (upstream: string, d = none, path?: string, way = bearer): boolean => {
  const [ex, route] = call(upstream, path);
  return keyDestination(ex, route, way, d).ok;
};

describe('where a key may go', () => {
  it("the provider's own API over HTTPS on its port, and nothing that only looks like it", () => {
    expect(ok('https://api.openai.com')).toBe(true);
    expect(ok('https://api.openai.com/v1', none, '/chat/completions')).toBe(true);
    expect(ok('http://api.openai.com')).toBe(false);
    expect(ok('https://api.openai.com:8443')).toBe(false);
    expect(ok('https://api.openai.com@other.example')).toBe(false);
    expect(ok('https://api.openai.com.other.example')).toBe(false);
    expect(ok('https://api.openai.com', none, '.other.example/v1/chat/completions')).toBe(false);
    expect(ok('https://api.openai.com', none, '@other.example/v1/chat/completions')).toBe(false);
    // Azure's key belongs to Azure's hosts: never sent by the tape's say, even to OpenAI.
    expect(ok('https://api.openai.com', none, undefined, azure)).toBe(false);
  });

  it('a route given for this run, at its origin; a host allowed by name', () => {
    const given: KeyDestinations = { given: new Map([['/openai', 'http://gateway.local:4000']]), allowed: [] };
    expect(ok('http://gateway.local:4000', given)).toBe(true);
    // Under a base path an `@` is part of the path; right after the host it starts another one.
    expect(ok('http://gateway.local:4000/v1', { ...given, given: new Map([['/openai', 'http://gateway.local:4000/v1']]) }, '@x/y')).toBe(
      true,
    );
    expect(ok('http://gateway.local:4000', given, '@other.example/x')).toBe(false);
    expect(ok('http://gateway.local:4001', given)).toBe(false);
    const allowed: KeyDestinations = { given: new Map(), allowed: ['api.groq.com', '127.0.0.1:8901'] };
    expect(ok('https://api.groq.com/openai', allowed)).toBe(true);
    expect(ok('http://127.0.0.1:8901', allowed)).toBe(true);
    expect(ok('http://127.0.0.1:8902', allowed)).toBe(false);
    expect(ok('https://user:pw@api.groq.com', allowed)).toBe(false);
  });

  it('--allow-host is a host or HOST:PORT', () => {
    expect(parseAllowedHost('API.Groq.com')).toBe('api.groq.com');
    expect(parseAllowedHost('127.0.0.1:8901')).toBe('127.0.0.1:8901');
    expect(parseAllowedHost('[::1]:8901')).toBe('[::1]:8901');
    for (const bad of ['https://x.example', 'x.example/p', 'u@x.example', '', 'x.example:port'])
      expect(parseAllowedHost(bad)).toBeUndefined();
  });
});
