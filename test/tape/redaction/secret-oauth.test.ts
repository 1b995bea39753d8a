/** OAuth's authorization codes are secrets by their place: found where they travel, redacted everywhere, reported by scan. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { oauthSecrets } from '../../../src/tape/redaction/secret-oauth.js';
import { scanTapeFile } from '../../../src/tape/redaction/scan.js';
import { createExchangeEncoder } from '../../../src/tape/exchange-encoder.js';
import type { Exchange } from '../../../src/tape/schema.js';
import { handExchange, handHeader, writeHandTape } from '../../helpers/hand-tape.js';

const CODE = 'SplxlOBeZQQYbYS6WxSbIA';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

const authorize = (): Pick<Exchange, 'request' | 'response'> => ({
  request: {
    method: 'GET',
    path: '/authorize',
    query: [
      ['response_type', 'code'],
      ['client_id', 'abc'],
      ['state', 'xyz'],
    ],
    headers: {},
    body: { kind: 'empty' },
  },
  response: {
    status: 302,
    headers: { location: `http://localhost:3999/callback?code=${CODE}&state=xyz` },
    body: { kind: 'text', text: `Found. Redirecting to http://localhost:3999/callback?code=${CODE}&state=xyz` },
  },
});
const token = (): Pick<Exchange, 'request' | 'response'> => ({
  request: {
    method: 'POST',
    path: '/token',
    query: [],
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: { kind: 'text', text: `grant_type=authorization_code&code=${CODE}&code_verifier=${VERIFIER}&client_id=abc` },
  },
  response: { status: 200, headers: {}, body: { kind: 'json', json: { access_token: 'at-0123456789', token_type: 'Bearer' } } },
});

describe('OAuth secrets by their place', () => {
  it('finds the code in an authorization redirect and in a token request, not in ordinary traffic', () => {
    expect(oauthSecrets(authorize()).map((s) => s.value)).toEqual([CODE]);
    expect(oauthSecrets(token()).map((s) => s.value)).toEqual([CODE]);
    const ordinary = token();
    ordinary.request.body = { kind: 'text', text: `code=${CODE}&lang=py` };
    expect(oauthSecrets(ordinary)).toEqual([]);
    const redirect = authorize();
    redirect.request.query = [];
    (redirect.response as NonNullable<Exchange['response']>).headers.location = `https://example.com/docs?code=${CODE}`;
    expect(oauthSecrets(redirect)).toEqual([]);
  });

  it('the writer replaces the code wherever the exchange has it, and the verifier by its name, with numbered markers', async () => {
    const enc = createExchangeEncoder({ putBlob: () => Promise.reject(new Error('no blobs')) });
    const base = { startedAt: new Date().toISOString(), offsetMs: 0, transport: 'http' as const, route: '/r', timing: { durationMs: 1 } };
    const a = await enc.encode({ ...base, ...authorize() }, 0);
    const t = await enc.encode({ ...base, ...token() }, 1);
    for (const line of [a.line, t.line]) {
      expect(line).not.toContain(CODE);
      expect(line).not.toContain(VERIFIER);
      expect(line).not.toContain('at-0123456789');
    }
    expect(a.ex.response?.headers.location).toBe('http://localhost:3999/callback?code=[REDACTED:1]&state=xyz');
    // The same code in the redirect and in the token request: the same marker.
    expect(t.line).toContain('code=[REDACTED:1]&code_verifier=[REDACTED:2]');
  });

  it('tapedeck scan reports codes and verifiers left on an older tape', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-scan-oauth-'));
    try {
      const file = path.join(dir, 'old.jsonl');
      writeHandTape(file, [handHeader('old'), handExchange(0, authorize()), handExchange(1, token())]);
      const { findings } = await scanTapeFile(file);
      const seen = findings.map((f) => [f.exchange, f.rule, f.path]);
      expect(seen).toContainEqual(['000000', 'secret-oauth', 'response.headers.location(query code)']);
      expect(seen).toContainEqual(['000001', 'secret-oauth', 'request.body(code)']);
      expect(seen).toContainEqual(['000001', 'field', 'request.body.text(code_verifier)']);
      expect(findings.every((f) => !f.preview.includes(CODE.slice(0, 4)))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
