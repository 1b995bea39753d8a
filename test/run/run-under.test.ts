import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runUnder } from '../../src/run/run-under.js';
import { readTape } from '../../src/tape/tape-reader.js';
import { runToEnd, spawnCli } from '../helpers/cli.js';
import { anthropicMessage, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/agents/sdk-agent.mjs');

let dir: string;
let upstream: ScriptedUpstream;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-wrap-'));
  upstream = await startScriptedUpstream((req) =>
    req.url.includes('/messages') ? anthropicMessage({ text: 'a short summary' }) : openaiChat({ content: 'a three-day plan' }),
  );
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[], env: NodeJS.ProcessEnv = {}): ReturnType<typeof runToEnd> {
  return runToEnd(args, { TAPEDECK_CA_DIR: path.join(dir, 'ca'), ...env });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('wrapper mode: tapedeck record|replay -- COMMAND', () => {
  it('records a Node agent (OpenAI + Anthropic SDKs from the env), then replays it with 0 upstream hits', async () => {
    const routes = ['--route', `/openai=${upstream.url}`, '--route', `/anthropic=${upstream.url}`];
    const rec = await run(['record', '--tape', 'agent', '--dir', dir, ...routes, '--', process.execPath, AGENT], { AGENT_EXIT: '3' });
    expect(rec.stdout).toContain('openai: a three-day plan');
    expect(rec.stdout).toContain('anthropic: a short summary');
    expect(rec.code).toBe(3); // the agent's own exit code
    expect(alive(rec.pid)).toBe(false);
    // One line says what runs and where; the variables themselves only under --verbose (the replay below).
    expect(rec.stderr).toMatch(
      /^tapedeck: running \S+ \S+ against http:\/\/127\.0\.0\.1:\d+ \(\d+ environment variables set; --verbose lists them\)$/m,
    );
    expect(rec.stderr).not.toContain('OPENAI_BASE_URL=');
    expect(rec.stderr).toContain('2 exchange(s) on tape "agent"');
    expect(upstream.requests).toHaveLength(2);
    const tape = await readTape(path.join(dir, 'agent.jsonl'));
    expect(tape.exchanges.map((e) => `${e.route}${e.request.path}`)).toEqual(['/openai/v1/chat/completions', '/anthropic/v1/messages']);

    const hits = upstream.requests.length;
    const rep = await run(['replay', 'agent', '--dir', dir, '--save-as', 'agent-run', '--verbose', '--', process.execPath, AGENT]);
    expect(rep.stderr).toMatch(/OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/openai\/v1/);
    expect(rep.stderr).toMatch(/ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/anthropic\n/);
    expect(rep.stderr).toContain('2 exchange(s) on replay tape "agent-run"');
    expect(rep.code).toBe(0);
    expect(rep.stdout).toContain('openai: a three-day plan');
    expect(rep.stdout).toContain('anthropic: a short summary');
    expect(upstream.requests).toHaveLength(hits); // nothing reached the upstream
    expect(alive(rep.pid)).toBe(false);
    const replayed = await readTape(path.join(dir, 'agent-run.jsonl'));
    expect(replayed.exchanges.map((e) => e.match?.kind)).toEqual(['exact', 'exact']);
  });

  it('passes SIGTERM on to the command, exits with its code once it has exited, leaves no process behind', async () => {
    const script = [
      'process.on("SIGTERM", () => { console.log("got SIGTERM"); process.exit(42); });',
      // Said once the handler is surely in place (Node takes a moment after process.on to catch the signal).
      'setTimeout(() => console.log("pid " + process.pid), 100);',
      'setInterval(() => undefined, 1000);',
    ].join(' ');
    const child = spawnCli(['record', '--tape', 'sig', '--dir', dir, '--', process.execPath, '-e', script], {
      TAPEDECK_CA_DIR: path.join(dir, 'ca'),
    });
    let stdout = '';
    const agentPid = await new Promise<number>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        const m = /pid (\d+)/.exec(stdout);
        if (m) resolve(Number(m[1]));
      }),
    );
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(stdout, `code ${code}`).toContain('got SIGTERM');
    expect(code).toBe(42);
    expect(alive(agentPid)).toBe(false);
    expect(alive(child.pid!)).toBe(false);
  });

  it('runUnder: a command that cannot be started is an error, and the tape is given back', async () => {
    const proxy = { mode: 'record', tape: 'nocmd', dir, routes: [] } as const;
    const forwardProxy = { caDir: path.join(dir, 'ca') };
    await expect(runUnder({ proxy, forwardProxy, command: 'tapedeck-no-such-command-xyz', stdio: 'ignore' })).rejects.toMatchObject({
      code: 'COMMAND_FAILED',
      message: 'cannot run tapedeck-no-such-command-xyz: command not found',
    });
    const again = await runUnder({
      proxy: { ...proxy, ifExists: 'overwrite' },
      forwardProxy,
      command: process.execPath,
      args: ['-e', 'process.exit(process.env.TAPEDECK_URL && process.env.EXTRA === "yes" ? 7 : 1)'],
      envOverrides: { EXTRA: 'yes' },
      stdio: 'ignore',
    });
    expect(again).toMatchObject({ exitCode: 7, tape: { name: 'nocmd', count: 0 } });
    const killed = await runUnder({
      proxy: { ...proxy, ifExists: 'overwrite' },
      forwardProxy,
      command: process.execPath,
      args: ['-e', 'process.kill(process.pid, "SIGTERM")'],
      stdio: 'ignore',
    });
    expect(killed).toMatchObject({ exitCode: 143, signal: 'SIGTERM' });
  });
});
