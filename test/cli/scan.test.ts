import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTapeWriter, type NewExchange } from '../../src/tape/stores/tape-writer.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const GHP = 'ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-scan-'));
  // A tape written by an older tapedeck (or edited by hand): secrets in a header, a body field, an event, a side file.
  const side = JSON.stringify({ notes: 'x'.repeat(100), aws: 'AKIAQ3ZLMXB4RT7W2KJN' });
  mkdirSync(path.join(dir, 'old.files'));
  writeFileSync(path.join(dir, 'old.files', 'big.json'), side);
  const lines = [
    { type: 'header', format: 1, tapedeck: '0.0.9', name: 'old', createdAt: '2026-01-01T00:00:00.000Z', mode: 'record', routes: [] },
    {
      type: 'exchange',
      id: '000000',
      seq: 0,
      startedAt: '2026-01-01T00:00:00.000Z',
      offsetMs: 0,
      transport: 'http',
      route: '/openai',
      request: {
        method: 'POST',
        path: '/v1/chat/completions',
        query: [['key', 'plain-query-key']],
        headers: { authorization: 'Bearer live-header-key' },
        body: { kind: 'json', json: { password: 'hunter2', messages: [{ role: 'user', content: `use ${GHP}` }] } },
      },
      response: { status: 200, headers: {}, events: [{ offsetMs: 1, data: JSON.stringify({ id_token: JWT }) }] },
      timing: { durationMs: 1 },
    },
    {
      type: 'exchange',
      id: '000001',
      seq: 1,
      startedAt: '2026-01-01T00:00:00.000Z',
      offsetMs: 0,
      transport: 'http',
      route: '/openai',
      request: { method: 'GET', path: '/v1/files', query: [], headers: {}, body: { kind: 'empty' } },
      response: {
        status: 200,
        headers: {},
        body: {
          kind: 'file',
          file: 'old.files/big.json',
          encoding: 'json',
          bytes: side.length,
          sha256: createHash('sha256').update(side).digest('hex'),
        },
      },
      timing: { durationMs: 1 },
    },
  ];
  writeFileSync(path.join(dir, 'old.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  // A tape written now: the same secrets, redacted at write time, so scan finds nothing.
  const w = await createTapeWriter({ dir, name: 'new', header: { mode: 'record', routes: [] } });
  const { type: _t, id: _i, seq: _s, ...recorded } = lines[1] as Record<string, unknown>;
  await w.append(recorded as unknown as NewExchange);
  await w.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tapedeck scan', () => {
  it('lists every credential left on a tape, side files included, without printing one, and exits 1', async () => {
    const r = await runCliInProcess(['scan', '--dir', dir]);
    expect(r.code).toBe(1);
    for (const secret of ['plain-query-key', 'live-header-key', 'hunter2', GHP, JWT, 'AKIAQ3ZLMXB4RT7W2KJN'])
      expect(r.stdout).not.toContain(secret);
    expect(r.stdout).toMatch(/old\.jsonl:2 exchange 000000 {2}request\.headers\.authorization {2}secret-header/);
    expect(r.stdout).toMatch(/request\.query\.key {2}secret-query/);
    expect(r.stdout).toMatch(/request\.body\.json\.password {2}field {2}…\(7 chars\)/);
    expect(r.stdout).toMatch(/request\.body\.json\.messages\[0\]\.content {2}github-pat {2}ghp_…\(40 chars\)/);
    expect(r.stdout).toMatch(/response\.events\[0\]\.data {2}jwt {2}eyJh…\(127 chars\)/);
    expect(r.stdout).toMatch(/request\.query\.key {2}secret-query {2}…\(15 chars\)/);
    expect(r.stdout).toMatch(
      /old\.jsonl:3 exchange 000001 {2}response\.body\(side file old\.files\/big\.json\)\.aws {2}aws-access-token {2}AKIA…/,
    );
    expect(r.stdout).not.toContain('new.jsonl');
    expect(r.stdout).toMatch(/credential-looking value\(s\) in 1 of 2 tape\(s\)/);
  });

  it('exits 0 for a clean tape, takes paths (pre-commit) and names, prints JSON, and exits 2 for a missing tape', async () => {
    const clean = await runCliInProcess(['scan', 'new', '--dir', dir]);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain('no credentials found in 1 tape(s)');
    const json = await runCliInProcess(['scan', path.join(dir, 'old.jsonl'), '--json']);
    expect(json.code).toBe(1);
    const findings = JSON.parse(json.stdout) as { rule: string; line: number; exchange?: string }[];
    expect(findings.map((f) => f.rule).sort()).toEqual(
      ['aws-access-token', 'field', 'github-pat', 'jwt', 'secret-header', 'secret-query'].sort(),
    );
    const missing = await runCliInProcess(['scan', 'nope', '--dir', dir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no tape "nope" in');
  });
});
