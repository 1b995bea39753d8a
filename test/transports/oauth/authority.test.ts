/** The authorization server replay plays: what it checks as a real one would, and the recorded shapes it answers with. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Authority, type AuthorityRequest } from '../../../src/transports/oauth/authority.js';
import type { RouteFlows } from '../../../src/transports/oauth/tape-flows.js';
import type { Exchange } from '../../../src/tape/schema.js';

const ex = (id: string, status: number, json: unknown, headers: Record<string, string> = {}): Exchange => ({
  type: 'exchange',
  id,
  seq: Number(id),
  startedAt: '2026-01-01T00:00:00.000Z',
  offsetMs: 0,
  transport: 'http',
  route: '/remote/mcp',
  upstream: 'https://auth.example.com',
  request: { method: 'POST', path: '/', query: [], headers: {}, body: { kind: 'empty' } },
  response: { status, headers, body: json === undefined ? { kind: 'empty' } : { kind: 'json', json } },
  timing: { durationMs: 1 },
});

function flows(): RouteFlows {
  return {
    site: { route: { prefix: '/remote/mcp', upstream: 'https://mcp.example.com/mcp' }, issuer: 'https://auth.example.com/' },
    serverPaths: new Map(),
    endpoints: new Map(),
    answers: new Map([
      [
        'register',
        [ex('3', 201, { client_id: 'client-1', client_secret: '[REDACTED:1]', redirect_uris: ['http://old/cb'], client_name: 'old' })],
      ],
      [
        'authorize',
        [ex('4', 302, undefined, { location: 'http://old/cb?code=[REDACTED:2]&state=s&iss=https%3A%2F%2Fauth.example.com%2F' })],
      ],
      [
        'token:authorization_code',
        [
          ex('7', 200, {
            access_token: '[REDACTED:3]',
            token_type: 'Bearer',
            expires_in: 3600,
            scope: 'mcp:tools',
            refresh_token: '[REDACTED:4]',
          }),
          ex('9', 200, { access_token: '[REDACTED:5]', token_type: 'Bearer', expires_in: 3600, scope: 'mcp:tools mcp:write' }),
        ],
      ],
    ]),
  };
}

const req = (params: Record<string, string>, json?: unknown): AuthorityRequest => ({
  method: 'POST',
  headers: {},
  params: new URLSearchParams(params),
  ...(json !== undefined ? { json } : {}),
});
const VERIFIER = 'a'.repeat(43);
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

function authorize(a: Authority, extra: Record<string, string> = {}): URL {
  const answer = a.answer(
    'authorize',
    req({
      response_type: 'code',
      client_id: 'client-1',
      redirect_uri: 'http://localhost:3999/cb',
      state: 'st-1',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      ...extra,
    }),
  );
  return new URL(answer?.headers.location ?? 'http://none/');
}

describe('the authorization server in replay', () => {
  it('registers a client: what it asked for echoed, the recorded id, fresh credentials where the tape has markers', () => {
    const a = new Authority(flows(), () => 'http://127.0.0.1:8787/remote/mcp/.oauth/');
    const answer = a.answer('register', req({}, { client_name: 'new agent', redirect_uris: ['http://localhost:3999/cb'] }));
    const json = answer?.json as Record<string, unknown>;
    expect(answer?.status).toBe(201);
    expect(json).toMatchObject({ client_id: 'client-1', client_name: 'new agent', redirect_uris: ['http://localhost:3999/cb'] });
    expect(json.client_secret).toMatch(/^tapedeck-replay-/);
    expect(answer?.source?.id).toBe('3');
  });

  it("authorizes: a fresh code for this client's challenge, its redirect URI and state, the issuer as the client knows it", () => {
    const a = new Authority(flows(), () => 'http://127.0.0.1:8787/remote/mcp/.oauth/');
    const back = authorize(a);
    expect(back.origin + back.pathname).toBe('http://localhost:3999/cb');
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('iss')).toBe('http://127.0.0.1:8787/remote/mcp/.oauth/');
    expect(back.searchParams.get('code')).toMatch(/^tapedeck-replay-code-/);
    const noPkce = authorize(a, { code_challenge_method: 'plain' });
    expect(noPkce.searchParams.get('error')).toBe('invalid_request');
    expect(noPkce.searchParams.get('code')).toBeNull();
  });

  it('exchanges a code only with its verifier, once, for its redirect URI; the Nth token request gets the Nth recorded answer', () => {
    const a = new Authority(flows(), () => 'i');
    const token = (code: string, verifier = VERIFIER, redirect = 'http://localhost:3999/cb') =>
      a.answer('token', req({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirect }));
    const wrong = token(authorize(a).searchParams.get('code') as string, 'b'.repeat(43));
    expect(wrong).toMatchObject({ status: 400, json: { error: 'invalid_grant' }, refused: true });
    expect(token('made-up-code')?.json).toMatchObject({ error: 'invalid_grant' });
    expect(token(authorize(a).searchParams.get('code') as string, VERIFIER, 'http://elsewhere/cb')?.json).toMatchObject({
      error: 'invalid_grant',
    });
    const code = authorize(a).searchParams.get('code') as string;
    const first = token(code);
    expect(first?.status).toBe(200);
    expect(first?.json).toMatchObject({
      token_type: 'Bearer',
      scope: 'mcp:tools',
      access_token: expect.stringMatching(/^tapedeck-replay-/),
    });
    expect(token(code)?.json).toMatchObject({ error: 'invalid_grant' });
    const second = token(authorize(a).searchParams.get('code') as string);
    expect(second?.json).toMatchObject({ scope: 'mcp:tools mcp:write' });
    expect(second?.source?.id).toBe('9');
  });

  it('refreshes only a refresh token it issued (an earlier run’s is refused, so the client authorizes again)', () => {
    const a = new Authority(flows(), () => 'i');
    const code = authorize(a).searchParams.get('code') as string;
    const tokens = a.answer(
      'token',
      req({ grant_type: 'authorization_code', code, code_verifier: VERIFIER, redirect_uri: 'http://localhost:3999/cb' }),
    )?.json as { refresh_token: string };
    const refreshed = a.answer('token', req({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }));
    expect(refreshed?.status).toBe(200);
    expect(refreshed?.json).toMatchObject({ access_token: expect.stringMatching(/^tapedeck-replay-/) });
    expect(a.answer('token', req({ grant_type: 'refresh_token', refresh_token: 'from-yesterday' }))?.json).toMatchObject({
      error: 'invalid_grant',
    });
  });
});
