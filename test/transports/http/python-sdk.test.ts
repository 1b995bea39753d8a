import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../../src/tape/tape-reader.js';
import { runToEnd } from '../../helpers/cli.js';
import { startHttpsSearch, type HttpsUpstream } from '../../helpers/https-upstream.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../../helpers/scripted-upstream.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/agents/py_agent.py');

/** The openai package for python3: installed already, or pip installs it (from the machine's wheels); else why not. */
function pythonOpenai(): string | undefined {
  const probe = (): boolean => spawnSync('python3', ['-c', 'import openai'], { timeout: 30_000 }).status === 0;
  if (spawnSync('python3', ['--version']).status !== 0) return 'python3 is not installed';
  if (probe()) return undefined;
  const pip = spawnSync('python3', ['-m', 'pip', 'install', '--quiet', 'openai'], { timeout: 120_000, encoding: 'utf8' });
  if (probe()) return undefined;
  return `pip could not install openai: ${(pip.stderr || pip.error?.message || '').trim().split('\n').pop()}`;
}

let dir: string;
let llm: ScriptedUpstream;
let search: HttpsUpstream;
let env: NodeJS.ProcessEnv;
let unavailable: string | undefined;

beforeAll(async () => {
  unavailable = pythonOpenai();
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-py-'));
  llm = await startScriptedUpstream(() => openaiChat({ content: 'cats are found' }));
  search = await startHttpsSearch();
  writeFileSync(path.join(dir, 'search-cert.pem'), search.certPem);
  env = {
    TAPEDECK_CA_DIR: path.join(dir, 'ca'),
    NODE_EXTRA_CA_CERTS: path.join(dir, 'search-cert.pem'),
    SEARCH_URL: search.url,
    OPENAI_API_KEY: 'sk-test-python-0123456789',
  };
}, 180_000);
afterAll(async () => {
  await llm.close();
  await search.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the real Python openai SDK in wrapper mode', () => {
  it('records an LLM call and an HTTPS_PROXY call, then replays both with the upstreams gone', async (ctx) => {
    if (unavailable !== undefined) {
      ctx.skip(`skipped: ${unavailable}`);
      return;
    }
    const route = ['--route', `/openai=${llm.url}`];
    const rec = await runToEnd(['record', '--tape', 'py', '--dir', dir, ...route, '--', 'python3', AGENT], { ...env, AGENT_EXIT: '5' });
    expect(rec.stdout, rec.stderr).toContain('openai: cats are found');
    expect(rec.stdout).toContain('search: cats result 1');
    expect(rec.code).toBe(5);
    expect(llm.requests).toHaveLength(1);
    expect(search.requests).toHaveLength(1);
    const tape = await readTape(path.join(dir, 'py.jsonl'));
    expect(tape.exchanges.map((e) => `${e.route}${e.request.path}`)).toEqual(['/openai/v1/chat/completions', `${search.url}/search`]);

    await llm.close();
    await search.close();
    const rep = await runToEnd(['replay', '--tape', 'py', '--dir', dir, '--save-as', 'py-run', '--', 'python3', AGENT], env);
    expect(rep.stdout, rep.stderr).toContain('openai: cats are found');
    expect(rep.stdout).toContain('search: cats result 1');
    expect(rep.code).toBe(0);
    const replayed = await readTape(path.join(dir, 'py-run.jsonl'));
    expect(replayed.exchanges.map((e) => e.match?.kind)).toEqual(['exact', 'exact']);
  });
});
