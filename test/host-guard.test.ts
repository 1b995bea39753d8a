/**
 * One Host / Origin guard and one list of loopback names for every local server (issue 24): the proxy (any port,
 * any local origin) and the viewer (its port, its own origin) ask the same check, so a name is either tapedeck's
 * everywhere or nowhere.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hostRefusal } from '../src/host-guard.js';
import { createLogger } from '../src/log.js';
import { ownHosts } from '../src/own-hosts.js';
import { createViewApp } from '../src/view/view-app.js';
import { createOpenTapes } from '../src/view/open-tapes.js';
import { createMemoryStore } from '../src/tape/stores/memory-store.js';
import { costFnFor, usageCostFnFor } from '../src/view/model.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
const PORT = 4321;
/** Two loopback names on one line: a list of them. */
const LOOPBACK_LIST = /['"`](localhost|127\.0\.0\.1|\[?::1\]?)['"`].*['"`](localhost|127\.0\.0\.1|\[?::1\]?)['"`]/;
const proxyCheck = { own: ownHosts({ bound: '127.0.0.1' }), who: "one of tapedeck's own names" };
const viewer = createViewApp({
  tapes: createOpenTapes({ store: createMemoryStore(), usageCost: usageCostFnFor(undefined) }),
  costOf: costFnFor(undefined),
  log: createLogger('silent'),
  port: () => PORT,
  boundAddress: '127.0.0.1',
});
const viewerStatus = async (headers: Record<string, string>): Promise<number> =>
  (await viewer.app.request('/api/tapes', { headers })).status;

describe('one loopback guard', () => {
  it('the proxy and the viewer accept the same loopback names (the viewer with its port only)', async () => {
    for (const name of ['localhost', '127.0.0.1', '[::1]', '127.0.0.2', 'agent.localhost']) {
      expect(hostRefusal({ host: `${name}:9999` }, proxyCheck), name).toBeUndefined();
      expect(await viewerStatus({ host: `${name}:${PORT}` }), name).toBe(200);
      expect(await viewerStatus({ host: `${name}:${PORT + 1}` }), name).toBe(403);
    }
    for (const name of ['evil.example', '10.0.0.1', 'localhost.evil.example']) {
      expect(hostRefusal({ host: `${name}:9999` }, proxyCheck)?.code, name).toBe('FORBIDDEN');
      expect(await viewerStatus({ host: `${name}:${PORT}` }), name).toBe(403);
    }
  });

  it('the proxy takes a local Origin on any port; the viewer only its own origin and no cross-site fetch', () => {
    const viewerCheck = { own: proxyCheck.own, who: 'this viewer', port: PORT, sameOrigin: true };
    const host = `localhost:${PORT}`;
    expect(hostRefusal({ host, origin: 'http://localhost:3000' }, proxyCheck)).toBeUndefined();
    expect(hostRefusal({ host, origin: 'http://localhost:3000' }, viewerCheck)?.message).toContain(
      'Origin "http://localhost:3000" is not this viewer',
    );
    expect(hostRefusal({ host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' }, viewerCheck)).toBeUndefined();
    expect(hostRefusal({ host, 'sec-fetch-site': 'cross-site' }, viewerCheck)?.message).toContain('Sec-Fetch-Site "cross-site"');
    expect(hostRefusal({ host, origin: 'null' }, proxyCheck)?.message).toMatch(
      /^tapedeck: Origin "null" is not one of tapedeck's own names/,
    );
    expect(hostRefusal({ host: 'evil.example' }, proxyCheck)?.message).toMatch(/DNS rebinding.*allowHosts/);
  });

  it('no module but own-hosts.ts keeps a list of loopback names or a 127/8 pattern', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((n) => {
        const p = path.join(dir, n);
        return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
      });
    const spelled = files(SRC)
      .filter((f) => path.relative(SRC, f) !== 'own-hosts.ts')
      .filter((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .some((line) => LOOPBACK_LIST.test(line) || line.includes('127\\.\\d')),
      )
      .map((f) => path.relative(SRC, f));
    expect(spelled).toEqual([]);
  });
});
