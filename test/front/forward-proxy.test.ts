import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/front/server.js';
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
    // --verbose: wrapper mode lists the variables it set (one line says how many otherwise).
    const rec = await runToEnd(['record', '--tape', 'search', '--dir', dir, ...config, '--verbose', '--', ...agent('cats')], env);
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

/** This machine's first non-loopback IPv4 address, if it has one. */
const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;

/** Send `method target` (absolute-form or CONNECT) to the proxy at host:port; resolves with the status. */
function proxied(host: string, port: number, method: string, target: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, method, path: target, headers: { host: target.replace(/^https?:\/\//, '').split('/')[0] } });
    req.on('connect', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe.skipIf(lanAddress === undefined)('forward proxy clients', () => {
  it('serves clients on this machine only: a peer on another address gets 403 for absolute-form and CONNECT', async () => {
    const proxy = await startProxy({ mode: 'record', tape: 'clients', dir, host: '0.0.0.0', port: 0, routes: [] });
    try {
      expect(await proxied(lanAddress!, proxy.port, 'GET', `${localUrl}/x`)).toBe(403);
      expect(await proxied(lanAddress!, proxy.port, 'CONNECT', '127.0.0.3:443')).toBe(403);
      expect(await proxied('127.0.0.1', proxy.port, 'GET', `${localUrl}/x`)).toBe(200);
    } finally {
      await proxy.close();
    }
  });
});
