/**
 * The base-URL table (docs/running-an-agent.md), checked: each SDK configured by environment variables alone (no
 * code change) reaches tapedeck, and the tape shows the upstream path the API expects (`/v1/chat/completions`,
 * `/v1/messages`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startProxy, type RunningProxy } from '../../../src/front/server.js';
import { loadTape } from '../../../src/tape/tape-reader.js';
import {
  anthropicMessage,
  lastUserText,
  openaiChat,
  startScriptedUpstream,
  type ScriptedUpstream,
} from '../../helpers/scripted-upstream.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
let dir: string;
let llm: ScriptedUpstream;
let proxy: RunningProxy;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-base-urls-'));
  llm = await startScriptedUpstream((req) => {
    const text = `answer to ${lastUserText(req.body)}`;
    return req.url.endsWith('/messages') ? anthropicMessage({ text }) : openaiChat({ content: text });
  });
  proxy = await startProxy({
    mode: 'record',
    tape: 'sdks',
    dir,
    port: 0,
    routes: [
      { prefix: '/openai', upstream: llm.url },
      { prefix: '/anthropic', upstream: llm.url },
    ],
    log: createLogger('silent'),
  });
});
afterAll(async () => {
  await proxy.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The environment of a fresh agent process: this one's, without any SDK setting or proxy of its own, plus `vars`. */
function agentEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(OPENAI|ANTHROPIC)_|proxy$/i.test(k)) env[k] = v;
  return { ...env, ...vars };
}

/** Run the agent to completion (asynchronously: tapedeck answers it from this very process). */
function run(cmd: string, args: string[], vars: Record<string, string>): Promise<string> {
  const child = spawn(cmd, args, { cwd: ROOT, env: agentEnv(vars), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`${cmd} exited ${code}: ${err}`)))),
  );
}

/** Whether python3 has the package (found, not imported: importing costs seconds). */
const hasPython = (pkg: string): boolean =>
  spawnSync('python3', ['-c', `import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("${pkg}") else 1)`], { stdio: 'ignore' })
    .status === 0;

async function recorded(prompt: string): Promise<{ route: string; path: string } | undefined> {
  const tape = await loadTape(dir, 'sdks');
  const ex = tape.exchanges.find((e) => JSON.stringify(e.request.body).includes(prompt));
  return ex && { route: ex.route, path: ex.request.path };
}

describe('SDKs pointed at tapedeck by environment variables alone', () => {
  it('openai (Node): OPENAI_BASE_URL=http://127.0.0.1:8787/openai/v1', async () => {
    const out = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import OpenAI from 'openai';
         const r = await new OpenAI().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'from node openai' }] });
         console.log(r.choices[0].message.content);`,
      ],
      { OPENAI_BASE_URL: `${proxy.url}/openai/v1`, OPENAI_API_KEY: 'sk-test' },
    );
    expect(out).toBe('answer to from node openai');
    expect(await recorded('from node openai')).toEqual({ route: '/openai', path: '/v1/chat/completions' });
  });

  it('@anthropic-ai/sdk (Node): ANTHROPIC_BASE_URL=http://127.0.0.1:8787/anthropic, without /v1', async () => {
    const out = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import Anthropic from '@anthropic-ai/sdk';
         const r = await new Anthropic().messages.create({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'from node anthropic' }] });
         console.log(r.content[0].text);`,
      ],
      { ANTHROPIC_BASE_URL: `${proxy.url}/anthropic`, ANTHROPIC_API_KEY: 'sk-ant-test' },
    );
    expect(out).toBe('answer to from node anthropic');
    expect(await recorded('from node anthropic')).toEqual({ route: '/anthropic', path: '/v1/messages' });
  });

  it('openai (Python): OPENAI_BASE_URL=http://127.0.0.1:8787/openai/v1', async (ctx) => {
    if (!hasPython('openai')) return ctx.skip('python3 with the openai package is not installed (pip install openai)');
    const out = await run(
      'python3',
      [
        '-c',
        `from openai import OpenAI
r = OpenAI().chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "from python openai"}])
print(r.choices[0].message.content)`,
      ],
      { OPENAI_BASE_URL: `${proxy.url}/openai/v1`, OPENAI_API_KEY: 'sk-test' },
    );
    expect(out).toBe('answer to from python openai');
    expect(await recorded('from python openai')).toEqual({ route: '/openai', path: '/v1/chat/completions' });
  });

  it('anthropic (Python): ANTHROPIC_BASE_URL=http://127.0.0.1:8787/anthropic, without /v1', async (ctx) => {
    if (!hasPython('anthropic')) return ctx.skip('python3 with the anthropic package is not installed (pip install anthropic)');
    const out = await run(
      'python3',
      [
        '-c',
        `import anthropic
r = anthropic.Anthropic().messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "from python anthropic"}])
print(r.content[0].text)`,
      ],
      { ANTHROPIC_BASE_URL: `${proxy.url}/anthropic`, ANTHROPIC_API_KEY: 'sk-ant-test' },
    );
    expect(out).toBe('answer to from python anthropic');
    expect(await recorded('from python anthropic')).toEqual({ route: '/anthropic', path: '/v1/messages' });
  });
});
