import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/tape/tape-reader.js';
import { startHttpsSearch, type HttpsUpstream } from '../helpers/https-upstream.js';
import { runToEnd } from '../helpers/cli.js';

const hasCurl = spawnSync('curl', ['--version']).status === 0;

let dir: string;
let env: NodeJS.ProcessEnv;
let search: HttpsUpstream;
let local: Server;
let localUrl: string;
let localHits = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-fwd-'));
  search = await startHttpsSearch();
  // tapedeck trusts the search server's own certificate the way Node trusts any private CA; the agent trusts tapedeck's CA.
  writeFileSync(path.join(dir, 'search-cert.pem'), search.certPem);
  env = { TAPEDECK_CA_DIR: path.join(dir, 'ca'), NODE_EXTRA_CA_CERTS: path.join(dir, 'search-cert.pem') };
  // A local service named as pass-through (a database, say): reached in record and replay, never on a tape.
  local = createServer((_req, res) => {
    localHits++;
    res.end('local ok');
  });
  await new Promise<void>((resolve) => local.listen(0, '127.0.0.3', resolve));
  localUrl = `http://127.0.0.3:${(local.address() as AddressInfo).port}`;
  writeFileSync(path.join(dir, 'config.yaml'), `passThrough: ['127.0.0.3']\n`);
});
afterAll(async () => {
  await search.close();
  await new Promise((r) => local.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasCurl)('forward proxy (HTTPS_PROXY) in wrapper mode, with curl as the agent', () => {
  it('records a plain HTTPS call to a non-LLM API with its own self-signed certificate, then serves it from the tape with the server gone', async () => {
    const agent = (q: string): string[] => [
      'sh',
      '-c',
      `curl -sS --fail "${search.url}/search?q=${q}" && echo && curl -sS --fail ${localUrl}/ping`,
    ];
    const config = ['--config', path.join(dir, 'config.yaml')];
    const rec = await runToEnd(['record', '--tape', 'search', '--dir', dir, ...config, '--', ...agent('cats')], env);
    expect(rec.stderr).toContain('HTTPS_PROXY=http://127.0.0.1:');
    expect(rec.code).toBe(0);
    expect(rec.stdout).toContain('"cats result 1"');
    expect(rec.stdout).toContain('local ok');
    expect(rec.stderr).toMatch(/passed through untouched, not on the tape: 127\.0\.0\.3:\d+ \(1\)/);
    expect(search.requests).toEqual(['GET /search?q=cats']);
    expect(localHits).toBe(1);
    const tape = await readTape(path.join(dir, 'search.jsonl'));
    expect(tape.exchanges.map((e) => [e.route, e.request.method, e.request.path, e.response?.status])).toEqual([
      [search.url, 'GET', '/search', 200],
    ]);
    // The CA was made once, its private key readable by the user only.
    expect(statSync(path.join(dir, 'ca', 'ca-key.pem')).mode & 0o777).toBe(0o600);

    await search.close();
    const rep = await runToEnd(
      ['replay', '--tape', 'search', '--dir', dir, ...config, '--save-as', 'search-run', '--', ...agent('cats')],
      env,
    );
    expect(rep.code).toBe(0);
    expect(rep.stdout).toContain('"cats result 1"');
    expect(rep.stdout).toContain('local ok');
    expect(localHits).toBe(2);
    const replayed = await readTape(path.join(dir, 'search-run.jsonl'));
    expect(replayed.exchanges.map((e) => [e.route, e.match?.kind])).toEqual([[search.url, 'exact']]);

    // An unrecorded request to the same host is a miss, never forwarded (the server is gone either way: a 404, not a 502).
    const miss = await runToEnd(['replay', '--tape', 'search', '--dir', dir, '--save-as', 'search-miss', '--', ...agent('dogs')], env);
    expect(miss.code).toBe(22); // curl --fail on an HTTP error
    expect(miss.stderr).toContain('404');
    expect(search.requests).toEqual(['GET /search?q=cats']);
  });
});
