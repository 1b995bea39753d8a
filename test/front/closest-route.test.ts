import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { closestRoute, editDistance } from '../../src/front/closest-route.js';
import { startProxy, type RunningProxy } from '../../src/front/server.js';

const routes = [
  { prefix: '/openai', upstream: 'https://api.openai.com' },
  { prefix: '/anthropic', upstream: 'https://api.anthropic.com' },
  { prefix: '/everything/mcp', upstream: 'http://127.0.0.1:3001/mcp' },
  { prefix: '/mcp/github', upstream: 'http://127.0.0.1:3002/mcp' },
  { prefix: '/local', upstream: 'http://127.0.0.1:11434' },
];

describe('closestRoute', () => {
  it.each([
    ['an LLM path without its prefix', '/v1/chat/completions', 'POST', '/openai/v1/chat/completions'],
    ['an Anthropic path without its prefix', '/v1/messages', 'POST', '/anthropic/v1/messages'],
    ['the path an MCP client rewrote to /mcp', '/mcp', 'POST', '/mcp/github'],
    ['route segments in the other order', '/mcp/everything', 'POST', '/everything/mcp'],
    ['a misspelt prefix', '/opnai/v1/models', 'GET', '/openai/v1/models'],
    ['a misspelt MCP route', '/everthing/mcp', 'POST', '/everything/mcp'],
    ['the start of a route', '/everything', 'POST', '/everything/mcp'],
  ])('%s: %s -> %s', (_what, asked, method, suggested) => {
    expect(closestRoute(asked, method, routes)?.path).toBe(suggested);
  });

  it('suggests nothing for a path that is close to no route', () => {
    expect(closestRoute('/totally/unrelated', 'GET', routes)).toBeUndefined();
    expect(closestRoute('/x', 'GET', [])).toBeUndefined();
  });

  it('edit distance', () => {
    expect(editDistance('openai', 'opnai')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    // Two neighbouring letters swapped, the commonest slip, count one edit (`--tpae`, `recrod`).
    expect(editDistance('tpae', 'tape')).toBe(1);
    expect(editDistance('recrod', 'record')).toBe(1);
  });
});

describe('the no-route answer', () => {
  let dir: string;
  let proxy: RunningProxy;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-noroute-'));
    proxy = await startProxy({ mode: 'record', tape: 'noroute', dir, port: 0, routes, log: createLogger('silent') });
  });
  afterAll(async () => {
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an MCP client on a path with no route gets a 404 naming the closest route, never reaching an upstream', async () => {
    const client = new Client({ name: 'no-route', version: '1.0.0' });
    const failure = await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`))).then(
      () => 'connected',
      (err: Error) => err.message,
    );
    expect(failure).toContain('no route for /mcp; did you mean /mcp/github?');
    expect(failure).toContain('name MCP routes NAME/mcp');
  });

  it('an OpenAI client whose base URL lacks the prefix is told the URL to use, in the API error shape', async () => {
    const openai = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
    const err = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const e = err as InstanceType<typeof OpenAI.NotFoundError>;
    expect(e.message).toContain('did you mean /openai/v1/chat/completions?');
    // And how to add a route, in the words of the command line.
    expect(e.message).toMatch(/routes: .*\. Add one with --route PREFIX=URL \(or under routes: in the config\)\.$/);
    expect((e.error as { type?: string }).type).toBe('tapedeck_no_route');
  });

  it('the JSON body carries the suggestion and the routes', async () => {
    const res = await fetch(`${proxy.url}/opnai/v1/models`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { type: string }; tapedeck: { suggestion: string; routes: string[] } };
    expect(body.error.type).toBe('tapedeck_no_route');
    expect(body.tapedeck.suggestion).toBe('/openai/v1/models');
    expect(body.tapedeck.routes).toContain('/everything/mcp');
  });
});
