/**
 * No input on any socket ends the process: malformed CONNECT authorities and absolute-form request lines (the
 * issue's own, then a few hundred generated from a seed) are sent over raw sockets to a running recorder and
 * replayer (the real CLI); each gets an HTTP error (or a closed socket), and afterwards a normal request still
 * succeeds and the process is alive.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../../src/log.js';
import { ownHosts } from '../../../src/own-hosts.js';
import { parseAuthority } from '../../../src/front/authority.js';
import type { ForwardProxy } from '../../../src/front/forward-proxy.js';
import { createRequestListener } from '../../../src/front/http-app.js';
import { spawnCli, waitForListening } from '../../helpers/cli.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../../helpers/scripted-upstream.js';

/** mulberry32: a small seeded generator, so every run sends the same inputs. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTS = [
  'example.com',
  'host',
  '999.1.1.1',
  '256.256.256.256',
  '1.2.3.4',
  '0x7f.1',
  '[::1]',
  '[::g]',
  '[fe80::1%eth0]',
  '[',
  ']',
  'a%',
  '%zz',
  'a%41',
  'ex ample.com',
  '',
  '-',
  '..',
  'a..b',
  'ä.example',
  'xn--zz',
  'x'.repeat(300),
  'a/b',
  'a?b',
  'a#b',
  'user@host',
  'user:pass@host',
  'host\\x',
  '*',
  'localhost',
];
const PORTS = ['443', '0', '1', '65535', '65536', '99999', '-1', '', 'abc', '00443', '1e3', '4430000', '443 ', '+443', '0x1bb'];
const GARBAGE = 'abc:%[]@/?#\\ .-_0123456789ÿ\u0000';

function authorities(rand: () => number, n: number): string[] {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  const out = ['example.com:99999', 'host:65536', '999.1.1.1:443', 'a%:443'];
  while (out.length < n) {
    const r = rand();
    if (r < 0.7) out.push(`${pick(HOSTS)}:${pick(PORTS)}`);
    else if (r < 0.85) out.push(pick(HOSTS));
    else {
      let s = '';
      const len = 1 + Math.floor(rand() * 24);
      for (let i = 0; i < len; i++) s += pick([...GARBAGE]);
      out.push(s);
    }
  }
  return out;
}

/** Raw request heads: CONNECT and absolute-form lines with generated authorities, odd paths, odd Host and Origin. */
function requestHeads(seed: number, n: number): string[] {
  const rand = seeded(seed);
  const paths = ['/', '/%', '/%zz', '/..', '/a?%', '/v1/chat/completions?x=%E0%A4%A', '', '/' + 'p'.repeat(2000)];
  const heads: string[] = [];
  for (const authority of authorities(rand, n)) {
    const safe = authority.replace(UNSENDABLE, '');
    const p = paths[Math.floor(rand() * paths.length)] as string;
    const scheme = rand() < 0.5 ? 'http' : 'https';
    switch (Math.floor(rand() * 4)) {
      case 0:
      case 1:
        heads.push(`CONNECT ${safe} HTTP/1.1\r\nHost: ${safe}\r\n\r\n`);
        break;
      case 2:
        heads.push(`GET ${scheme}://${safe}${p} HTTP/1.1\r\nHost: ${safe}\r\n\r\n`);
        break;
      default:
        heads.push(`POST /up${p} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${scheme}://${safe}\r\ncontent-length: 2\r\n\r\n{}`);
    }
  }
  return heads;
}

/** Send one raw head; resolve with the status line the server answered (or '' when it closed without one). */
function sendRaw(port: number, head: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(got.split('\r\n')[0] ?? '');
    };
    const timer = setTimeout(done, 3000);
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n')) done();
    });
    socket.on('error', done);
    socket.on('close', done);
    socket.write(Buffer.from(head, 'utf8'));
  });
}

async function sendAll(port: number, heads: string[]): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < heads.length; i += 16) out.push(...(await Promise.all(heads.slice(i, i + 16).map((h) => sendRaw(port, h)))));
  return out;
}

/** What cannot stand in a request line at all (the client would not get it past its own HTTP library either). */
// eslint-disable-next-line no-control-regex
const UNSENDABLE = /[\r\n\u0000]/g;

let dir: string;
let upstream: ScriptedUpstream;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-malformed-'));
  upstream = await startScriptedUpstream(() => openaiChat({ content: 'still here' }));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('CONNECT authorities', () => {
  it.each([['example.com:99999'], ['host:65536'], ['999.1.1.1:443'], ['a%:443'], ['host:0'], ['[::g]:443'], ['host'], [':443']])(
    'refuses %s',
    (authority) => {
      expect(parseAuthority(authority).ok).toBe(false);
    },
  );
  it.each([
    ['example.com:443', 'https://example.com'],
    ['Example.COM:8443', 'https://example.com:8443'],
    ['127.0.0.1:443', 'https://127.0.0.1'],
    ['[::1]:443', 'https://[::1]'],
  ])('accepts %s as %s', (authority, origin) => {
    expect(parseAuthority(authority)).toMatchObject({ ok: true, origin });
  });
});

describe.each(['record', 'replay'] as const)(
  'malformed input to a running %s',
  (mode) => {
    it('answers each with an error, and keeps serving', async () => {
      const env = { TAPEDECK_CA_DIR: path.join(dir, 'ca') };
      const route = ['--route', `/up=${upstream.url}`];
      if (mode === 'replay') {
        // A tape with the one call the final check makes.
        const rec = spawnCli(['record', '--tape', 'fuzz', '--dir', dir, '--port', '0', ...route], env);
        children.push(rec);
        const url = await waitForListening(rec);
        expect((await post(url)).status).toBe(200);
        rec.kill('SIGINT');
        await new Promise((r) => rec.once('close', r));
      }
      const args =
        mode === 'record'
          ? ['record', '--tape', 'fuzz-rec', '--dir', dir, '--port', '0', ...route]
          : ['replay', '--tape', 'fuzz', '--save-as', 'fuzz-replay', '--dir', dir, '--port', '0'];
      const child = spawnCli(args, env);
      children.push(child);
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const url = await waitForListening(child);
      const port = Number(new URL(url).port);

      const heads = requestHeads(20, 300);
      const answers = await sendAll(port, heads);
      // The four: each a 400, not a dead process.
      for (let i = 0; i < 4; i++) if (heads[i]?.startsWith('CONNECT')) expect(answers[i]).toMatch(/^HTTP\/1\.1 400 /);
      for (const a of answers) expect(a === '' || /^HTTP\/1\.1 [1-5]\d\d /.test(a)).toBe(true);
      expect(child.exitCode).toBeNull();
      // The generated heads with the four first, as CONNECTs (whatever the generator chose for them).
      const connects = authorities(seeded(7), 200).map((a) => `CONNECT ${a.replace(UNSENDABLE, '')} HTTP/1.1\r\nHost: x\r\n\r\n`);
      const connectAnswers = await sendAll(port, connects);
      expect(connectAnswers.slice(0, 4)).toEqual(Array(4).fill(expect.stringMatching(/^HTTP\/1\.1 400 /)));
      expect(child.exitCode).toBeNull();

      const res = await post(url);
      expect(res.status).toBe(200);
      expect(res.text).toContain('still here');
      expect(child.exitCode).toBeNull();
      expect(stderr).not.toMatch(/TypeError|Invalid URL|uncaught/i);
      child.kill('SIGINT');
      expect(await new Promise((r) => child.once('close', r))).toBe(0);
    });
  },
  120_000,
);

describe('the viewer', () => {
  it('answers the same malformed input with errors, and keeps serving', async () => {
    const child = spawnCli(['view', '--dir', dir, '--port', '0', '--no-open']);
    children.push(child);
    const url = await waitForListening(child);
    const port = Number(new URL(url).port);
    const answers = await sendAll(port, requestHeads(21, 300));
    for (const a of answers) expect(a === '' || /^HTTP\/1\.1 [1-5]\d\d /.test(a)).toBe(true);
    expect(answers.some((a) => a.startsWith('HTTP/1.1 5'))).toBe(false);
    expect(child.exitCode).toBeNull();
    const res = await fetch(`${url}api/tapes`);
    expect(res.status).toBe(200);
    child.kill('SIGINT');
    await new Promise((r) => child.once('close', r));
  });
}, 60_000);

describe('the proxy listener', () => {
  it('turns an exception while taking a request in into a 500 for that request; the server keeps serving', async () => {
    let calls = 0;
    const forward = {
      targetOf: () => {
        if (calls++ === 0) throw new TypeError('Invalid URL');
        return undefined;
      },
    } as unknown as ForwardProxy;
    const listener = createRequestListener({
      routes: [{ prefix: '/up', upstream: upstream.url }],
      handle: async (_req, res) => void res.writeHead(200).end('ok'),
      clock: () => 0,
      log: createLogger('silent'),
      own: ownHosts(),
      forward,
    });
    const server = createServer(listener);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/up/x`)).status).toBe(500);
      const ok = await fetch(`${base}/up/x`);
      expect([ok.status, await ok.text()]).toEqual([200, 'ok']);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

async function post(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}/up/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] }),
  });
  return { status: res.status, text: await res.text() };
}
