/**
 * DNS rebinding (issue 13 #7): a request whose Host or Origin names another site never reaches the upstream, in
 * record and replay; the proxy's own names, local origins on any port, and names the config allows pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startProxy, type RunningProxy } from '../../src/front/server.js';
import { rawRequest } from '../helpers/raw-http.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const log = createLogger('silent');
const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
const post = (proxy: RunningProxy, headers: Record<string, string>) =>
  rawRequest(proxy.url, {
    method: 'POST',
    path: '/llm/v1/chat/completions',
    headers: { 'content-type': 'application/json', ...headers },
    body: chat,
  });

describe('Host and Origin are checked on every request', () => {
  let dir: string;
  let upstream: ScriptedUpstream;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-guard-'));
    upstream = await startScriptedUpstream(() => openaiChat({ content: 'hello' }));
  });
  afterAll(async () => {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('record: a foreign Host or Origin gets a 403 that says why, and the upstream never sees it', async () => {
    const rec = await startProxy({
      mode: 'record',
      tape: 'guard',
      dir,
      port: 0,
      routes: [{ prefix: '/llm', upstream: upstream.url }],
      log,
    });
    const port = new URL(rec.url).port;
    try {
      const rebound = await post(rec, { host: `evil.example:${port}` });
      expect(rebound.status).toBe(403);
      expect(JSON.parse(rebound.body).error).toMatchObject({
        type: 'tapedeck_forbidden',
        message: expect.stringContaining('Host "evil.example'),
      });
      const crossSite = await post(rec, { host: `127.0.0.1:${port}`, origin: 'http://evil.example' });
      expect(crossSite.status).toBe(403);
      expect(JSON.parse(crossSite.body).error.message).toContain('Origin "http://evil.example"');
      expect(upstream.requests).toHaveLength(0);

      expect((await post(rec, { host: `localhost:${port}` })).status).toBe(200);
      expect((await post(rec, { host: `127.0.0.1:${port}`, origin: 'http://localhost:3000' })).status).toBe(200);
      expect(upstream.requests).toHaveLength(2);
    } finally {
      await rec.close();
    }
  });

  it('replay refuses the same, and allowHosts adds a name', async () => {
    const rep = await startProxy({ mode: 'replay', tape: 'guard', dir, port: 0, routes: [], saveAs: 'guard-replay', log });
    const port = new URL(rep.url).port;
    try {
      expect((await post(rep, { host: `evil.example:${port}` })).status).toBe(403);
      const ok = await post(rep, { host: `localhost:${port}` });
      expect(ok.status, ok.body).toBe(200);
    } finally {
      await rep.close();
    }
    const allowed = await startProxy({
      mode: 'replay',
      tape: 'guard',
      dir,
      port: 0,
      routes: [],
      saveAs: 'guard-replay-2',
      allowHosts: ['agent.internal'],
      log,
    });
    try {
      expect((await post(allowed, { host: `agent.internal:${new URL(allowed.url).port}` })).status).toBe(200);
    } finally {
      await allowed.close();
    }
  });
});
