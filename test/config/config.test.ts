import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, routesOf } from '../../src/config/config.js';
import { createRouteTable } from '../../src/front/routes.js';
import { upstreamUrl } from '../../src/tape/routes.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('config', () => {
  it('ships default routes for OpenAI, Anthropic and Gemini', () => {
    const config = loadConfig(undefined, {}, {});
    expect(config.routes).toMatchObject({
      '/openai': 'https://api.openai.com',
      '/anthropic': 'https://api.anthropic.com',
      '/gemini': 'https://generativelanguage.googleapis.com',
    });
    expect(config).toMatchObject({ dir: './tapes', host: '127.0.0.1', port: 8787 });
  });

  it('merges file, then TAPEDECK_DIR, then flags', () => {
    const file = path.join(dir, 'c.yaml');
    writeFileSync(file, 'dir: /from-file\nport: 9000\nroutes:\n  /local: http://127.0.0.1:11434\n');
    expect(loadConfig(file, {}, {})).toMatchObject({
      dir: '/from-file',
      port: 9000,
      routes: { '/local': 'http://127.0.0.1:11434', '/openai': 'https://api.openai.com' },
    });
    expect(loadConfig(file, {}, { TAPEDECK_DIR: '/from-env' }).dir).toBe('/from-env');
    expect(
      loadConfig(file, { dir: '/from-flag', port: 0, routes: ['/local=http://127.0.0.1:1'] }, { TAPEDECK_DIR: '/from-env' }),
    ).toMatchObject({ dir: '/from-flag', port: 0, routes: { '/local': 'http://127.0.0.1:1' } });
  });

  it('says what is wrong with a bad file', () => {
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(bad, 'port: lots\n');
    expect(() => loadConfig(bad, {}, {})).toThrow(/bad config in .*bad\.yaml: port/);
    writeFileSync(bad, 'nonsense: true\n');
    expect(() => loadConfig(bad, {}, {})).toThrow(/Unrecognized key/);
    writeFileSync(bad, 'routes: [unclosed\n');
    expect(() => loadConfig(bad, {}, {})).toThrow(/not valid YAML/);
  });
});

describe('routes', () => {
  const table = createRouteTable(
    routesOf(loadConfig(undefined, { routes: ['/mcp=http://127.0.0.1:3001/mcp', '/openai/special=http://127.0.0.1:2'] }, {})),
  );

  it('resolves the longest prefix on whole path segments', () => {
    expect(table.resolve('/openai/v1/chat/completions')).toMatchObject({ route: { prefix: '/openai' }, path: '/v1/chat/completions' });
    expect(table.resolve('/openai/special/v1')).toMatchObject({ route: { prefix: '/openai/special' }, path: '/v1' });
    expect(table.resolve('/openaix/v1')).toBeUndefined();
  });

  it('keeps the upstream path and the query', () => {
    const mcp = table.resolve('/mcp')!;
    expect(upstreamUrl(mcp.route, mcp.path, [])).toBe('http://127.0.0.1:3001/mcp');
    const gemini = table.resolve('/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent')!;
    expect(upstreamUrl(gemini.route, gemini.path, [['alt', 'sse']])).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
  });
});
