import { describe, expect, it } from 'vitest';
import { redactStoreUrl, redactUrlCredentials } from '../../../src/tape/redaction/url-credentials.js';

describe('redactUrlCredentials', () => {
  it('replaces the password of every URL in a message, keeping the user name', () => {
    expect(redactUrlCredentials('postgres://app:hunter2@db:5432/tapes')).toBe('postgres://app:***@db:5432/tapes');
    expect(redactUrlCredentials('could not push spans to http://u:pw@127.0.0.1:4318/v1/traces: Not Found')).toBe(
      'could not push spans to http://u:***@127.0.0.1:4318/v1/traces: Not Found',
    );
    expect(redactUrlCredentials('a http://a:1@x and https://b:2@y')).toBe('a http://a:***@x and https://b:***@y');
    // A password holding `@` ends at the last one before the path.
    expect(redactUrlCredentials('http://u:p@ss@host/x')).toBe('http://u:***@host/x');
    expect(redactUrlCredentials('postgres://db/tapes?user=a&password=hunter2')).toBe('postgres://db/tapes?user=a&password=***');
    // Query parameters the tape redacts are not printed either.
    expect(redactUrlCredentials('no route: /gemini -> https://g.example/?key=AIzaXYZ&alt=sse')).toBe(
      'no route: /gemini -> https://g.example/?key=***&alt=sse',
    );
  });

  it('leaves URLs without a password as they are', () => {
    for (const url of ['postgres://postgres@127.0.0.1:5432/postgres', 'http://127.0.0.1:4318', 'not a url', 'mailto:a@b.c'])
      expect(redactUrlCredentials(url)).toBe(url);
    expect(redactStoreUrl).toBe(redactUrlCredentials);
  });
});
