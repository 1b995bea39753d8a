import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxSupport } from '../../src/run/sandbox.js';
import { readTape } from '../../src/tape/tape-reader.js';
import { runToEnd } from '../helpers/cli.js';
import { openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/agents/egress-agent.mjs');
const support = sandboxSupport();

let dir: string;
let upstream: ScriptedUpstream;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-sandbox-'));
  upstream = await startScriptedUpstream(() => openaiChat({ content: 'a three-day plan' }));
  env = { TAPEDECK_CA_DIR: path.join(dir, 'ca'), DIRECT_HOST: '127.0.0.1', DIRECT_PORT: String(upstream.port) };
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('replay --sandbox -- COMMAND', () => {
  it.skipIf(!support.ok)(`the command reaches tapedeck and nothing else${support.ok ? '' : ` (skipped: ${support.reason})`}`, async () => {
    const route = ['--route', `/openai=${upstream.url}`];
    // Recorded without the sandbox: the direct connection to the server works there.
    const rec = await runToEnd(['record', '--tape', 'boxed', '--dir', dir, ...route, '--', process.execPath, AGENT], env);
    expect(rec.stdout, rec.stderr).toContain('direct: connected');
    expect(rec.stdout).toContain('proxied: 200 a three-day plan');
    const hits = upstream.requests.length;

    const rep = await runToEnd(
      ['replay', '--tape', 'boxed', '--dir', dir, '--save-as', 'boxed-run', '--sandbox', '--', process.execPath, AGENT],
      env,
    );
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stderr).toContain('in the sandbox');
    expect(rep.stdout).toMatch(/direct: failed (ECONNREFUSED|ENETUNREACH)/);
    expect(rep.stdout).toContain('proxied: 200 a three-day plan');
    expect(upstream.requests).toHaveLength(hits);
    const replayed = await readTape(path.join(dir, 'boxed-run.jsonl'));
    expect(replayed.exchanges.map((e) => e.match?.kind)).toEqual(['exact']);
  });

  it('where the sandbox cannot run, says why in one line and runs nothing (no fallback)', async () => {
    // No unshare on the PATH stands for a machine without namespaces.
    const r = await runToEnd(['replay', '--tape', 'boxed', '--dir', dir, '--sandbox', '--', process.execPath, '-e', 'console.log("ran")'], {
      ...env,
      PATH: path.join(dir, 'no-such-bin'),
    });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('ran');
    expect(r.stderr.trim().split('\n').at(-1)).toBe('tapedeck replay: the sandbox cannot run here: unshare (util-linux) is not installed');
  });

  it('--sandbox without a command is a usage error', async () => {
    const r = await runToEnd(['replay', '--tape', 'boxed', '--dir', dir, '--sandbox'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--sandbox runs a command in a sandbox: add -- COMMAND ARGS...');
  });
});
