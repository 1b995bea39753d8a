/**
 * How a PostgreSQL store URL is read (by pg's own parser) and printed (rebuilt from what was read, secrets as ***):
 * no server needed.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUT_MS, pgLocation } from '../../src/tape/stores/postgres/connection.js';

describe('pgLocation', () => {
  it('prints the store rebuilt: password and secret parameters as ***, a socket folder and IPv6 as libpq writes them', () => {
    expect(pgLocation('postgres://u:hunter2@db.example:5433/app?sslmode=verify-full&sslpassword=s3cret').display).toBe(
      'postgres://u:***@db.example:5433/app?sslmode=verify-full&sslpassword=***',
    );
    expect(pgLocation('postgresql://u@[::1]/app?password=s3cret').display).toBe('postgres://u:***@[::1]/app');
    expect(pgLocation('postgres:///app?host=/var/run/postgresql').display).toBe('postgres:///app?host=%2Fvar%2Frun%2Fpostgresql');
    // A password holding an escaped # (as it must be) is read as pg reads it, and never printed.
    const loc = pgLocation('postgres://u:pa%23ss@h/app');
    expect(loc.config.password).toBe('pa#ss');
    expect(loc.display).toBe('postgres://u:***@h/app');
  });

  it("takes tapedeck's own parameters out of what the driver gets: namespace and timeout", () => {
    const loc = pgLocation('postgres://u@h/app?namespace=team-a&timeout=2.5&application_name=x');
    expect(loc).toMatchObject({
      namespace: 'team-a',
      timeoutMs: 2500,
      display: 'postgres://u@h/app?application_name=x (namespace team-a)',
    });
    expect(loc.config).not.toHaveProperty('namespace');
    expect(loc.config).not.toHaveProperty('timeout');
    expect(pgLocation('postgres://u@h/app').timeoutMs).toBe(DEFAULT_TIMEOUT_MS);
    expect(pgLocation('postgres://u@h/app?timeout=2', { timeoutMs: 500 }).timeoutMs).toBe(500);
  });

  it('refuses what it cannot use in one line that quotes nothing of it', () => {
    for (const [url, why] of [
      ['postgres://u:pa#ss-SECRET@h/app', /percent-encode # \/ \? @ :/],
      ['host=h password=SECRET', /keyword\/value connection string/],
      ['postgres://u:SECRET@h/app?timeout=soon', /timeout= in the tape store URL takes seconds/],
      ['postgres://u:SECRET@h/app?namespace=a%1bb', /namespace "a\\u001bb"/],
    ] as const) {
      let message = '';
      try {
        pgLocation(url);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(why);
      expect(message).not.toContain('SECRET');
      expect(message.split('\n')).toHaveLength(1);
    }
  });
});
