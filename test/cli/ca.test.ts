import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { caCommand } from '../../src/cli/ca.js';
import { loadOrCreateCa } from '../../src/front/ca.js';
import { runCommand } from '../helpers/run-command.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-ca-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tapedeck ca', () => {
  it('creates the CA once (key 0600), shows it, prints its PEM, and regenerates it on request', async () => {
    const env = { TAPEDECK_CA_DIR: dir };
    const first = await runCommand(caCommand, [], { env });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`certificate  ${path.join(dir, 'ca.pem')} (created)`);
    expect(statSync(path.join(dir, 'ca-key.pem')).mode & 0o777).toBe(0o600);
    const again = await runCommand(caCommand, [], { env });
    expect(again.stdout).toContain('(existing)');
    const pem = await runCommand(caCommand, ['--pem'], { env });
    expect(pem.stdout).toBe(readFileSync(path.join(dir, 'ca.pem'), 'utf8'));
    const ca = new X509Certificate(pem.stdout);
    expect(ca.ca).toBe(true);
    const fresh = await runCommand(caCommand, ['--regenerate'], { env });
    expect(fresh.stdout).toContain('(regenerated)');
    expect(readFileSync(path.join(dir, 'ca.pem'), 'utf8')).not.toBe(pem.stdout);
  });

  it('keeps one TLS context per host (case-insensitive) and reports the CA fingerprint', () => {
    const ca = loadOrCreateCa(dir);
    const caCert = new X509Certificate(ca.certPem);
    expect(ca.contextFor('api.example.com')).toBe(ca.contextFor('API.example.com')); // cached
    expect(caCert.fingerprint256).toBe(ca.fingerprint);
  });
});
