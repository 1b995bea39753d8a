/**
 * The single executable (`npm run build:exe`, scripts/build-exe.ts) as someone without Node.js has it: the file alone,
 * run from an empty folder with a PATH that holds no `node`, `npm` or `npx` (a folder of links to what the agent and
 * the sandbox need: python3, sh, unshare, ip). It records a chat completion from a scripted upstream in wrapper mode,
 * replays it with the upstream gone, shows it, serves the viewer (its web assets embedded), runs the agent in the
 * sandbox (the bridge is the executable itself), records and replays an MCP server over stdio, exports, diffs, and
 * pushes and pulls through PostgreSQL (the default
 * config and prices embedded too). Built once per source and shared with the wheel test (test/helpers/built-executable.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { builtExecutable, cannotBuild, type Built } from '../helpers/built-executable.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** An agent in Python, the standard library only: one chat completion through OPENAI_BASE_URL (set by tapedeck). */
const AGENT = `
import json, sys, urllib.request
body = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": sys.argv[1]}]}).encode()
req = urllib.request.Request(
    __import__("os").environ["OPENAI_BASE_URL"] + "/chat/completions",
    data=body,
    headers={"content-type": "application/json", "authorization": "Bearer sk-exe-SECRET-0123"},
)
with urllib.request.urlopen(req) as res:
    print(json.load(res)["choices"][0]["message"]["content"])
`;

/** An MCP server over stdio in Python (no SDK): initialize, and one tool that echoes. */
const MCP_SERVER = `
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "1"}}
    else:
        result = {"content": [{"type": "text", "text": "echo " + msg["params"]["arguments"]["text"]}]}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
`;

/** What an MCP client sends: initialize, initialized, one tool call. */
const MCP_CLIENT = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
]
  .map((m) => JSON.stringify(m) + '\n')
  .join('');

/** The real interpreter behind `python3` (a pyenv shim is a script that needs more than the PATH here has). */
function realPython(): string | null {
  const found = spawnSync('python3', ['-c', 'import os, sys; print(os.path.realpath(sys.executable))'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

function which(cmd: string): string | null {
  const found = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim().startsWith('/') ? found.stdout.trim() : null;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

const python = realPython();
const why = cannotBuild();
if (why !== null && process.env.CI === 'true') throw new Error(`CI=true and the single executable cannot be built: ${why}`);
let built: Built | undefined;

describe('the single executable, with no Node.js on the PATH', () => {
  let work: string;
  let empty: string;
  let exe: string;
  let env: NodeJS.ProcessEnv;
  let upstream: ScriptedUpstream | undefined;

  /** Run the executable from the empty folder, with nothing of Node's reachable. */
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}, input?: string): Promise<Ran> =>
    new Promise((resolve, reject) => {
      const child = spawn(exe, args, {
        cwd: empty,
        env: { ...env, ...extra },
        stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      if (input !== undefined) child.stdin!.end(input);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });

  beforeAll(async () => {
    if (why !== null || python === null) return;
    built = await builtExecutable();
    if (!built.ok) throw new Error(built.reason);
    work = mkdtempSync(path.join(tmpdir(), 'tapedeck-exe-'));
    empty = path.join(work, 'empty');
    const bin = path.join(work, 'bin');
    mkdirSync(empty);
    mkdirSync(bin);
    symlinkSync(python, path.join(bin, 'python3'));
    for (const tool of ['sh', 'unshare', 'ip']) {
      const at = which(tool);
      if (at !== null) symlinkSync(realpathSync(at), path.join(bin, tool));
    }
    // The executable alone, outside the checkout: no node_modules anywhere above it.
    exe = path.join(work, path.basename(built.file));
    writeFileSync(exe, readFileSync(built.file), { mode: 0o755 });
    writeFileSync(path.join(empty, 'agent.py'), AGENT);
    env = { PATH: bin, HOME: path.join(work, 'home'), TAPEDECK_CA_DIR: path.join(work, 'ca') };
    upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
  }, 600_000);

  afterAll(async () => {
    await upstream?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const ready = (): boolean => built?.ok === true && python !== null;

  it('records a chat completion, replays it with the upstream gone, shows it and serves the viewer', { timeout: 180_000 }, async (ctx) => {
    if (!ready()) return ctx.skip();
    for (const node of ['node', 'npm', 'npx']) expect(spawnSync('sh', ['-c', `command -v ${node}`], { env }).status, node).not.toBe(0);
    const version = await run(['--version']);
    expect(version.stdout.trim()).toBe(VERSION);

    const record = await run(['record', 'chat', '--route', `/openai=${upstream!.url}`, '--', 'python3', 'agent.py', 'celsius']);
    expect(record.code, record.stderr).toBe(0);
    expect(record.stdout).toContain('echo: celsius');
    const tape = path.join(empty, 'tapes/chat.jsonl');
    expect(readFileSync(tape, 'utf8')).not.toContain('sk-exe-SECRET');
    const seen = upstream!.requests.length;
    expect(seen).toBe(1);

    const replay = await run(['replay', 'chat', '--route', '/openai=http://127.0.0.1:9', '--', 'python3', 'agent.py', 'celsius']);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain('echo: celsius');
    expect(upstream!.requests.length).toBe(seen);

    const show = await run(['show', 'chat']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/gpt-4o-mini celsius → echo: celsius/);
    // The price table is the embedded one.
    const cost = await run(['cost', 'chat']);
    expect(cost.stdout).toMatch(/gpt-4o-mini\s+12→7\s+\$0\.\d+/);

    const view = spawn(exe, ['view', '--no-open'], { cwd: empty, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        view.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!.replace(/\/$/, ''));
        });
        view.once('exit', (code) => reject(new Error(`view exited with ${code}`)));
      });
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/assets/app.js');
      for (const asset of ['app.js', 'style.css']) expect((await fetch(`${url}/assets/${asset}`)).status, asset).toBe(200);
      const tapes = (await (await fetch(`${url}/api/tapes`)).json()) as { tapes: { name: string }[] };
      expect(tapes.tapes.map((t) => t.name)).toContain('chat');
    } finally {
      view.kill('SIGTERM');
      await new Promise((resolve) => view.once('close', resolve));
    }
  });

  it('exports, diffs, and pushes and pulls a tape through PostgreSQL', { timeout: 120_000 }, async (ctx) => {
    if (!ready() || !existsSync(path.join(empty, 'tapes/chat.jsonl'))) return ctx.skip();
    const har = await run(['export', 'chat', '--format', 'har']);
    expect(har.code, har.stderr).toBe(0);
    expect(JSON.parse(har.stdout).log.creator).toEqual({ name: 'tapedeck', version: VERSION });
    const diff = await run(['diff', 'chat', 'chat']);
    expect(diff.stdout).toContain('identical');
    const pg = inject('pgUrl');
    if (pg === null) {
      console.log(inject('pgNote'));
      return;
    }
    const store = `${pg}?namespace=exe-${process.pid}`;
    const push = await run(['push', 'chat', '--to', store]);
    expect(push.code, push.stderr).toBe(0);
    const pull = await run(['pull', 'chat', '--from', store, '--dir', 'pulled']);
    expect(pull.code, pull.stderr).toBe(0);
    expect(existsSync(path.join(empty, 'pulled/chat.jsonl'))).toBe(true);
  });

  it('mcp-stdio records a stdio MCP server and replays it without the server', { timeout: 120_000 }, async (ctx) => {
    if (!ready()) return ctx.skip();
    writeFileSync(path.join(empty, 'mcp_server.py'), MCP_SERVER);
    const record = await run(['mcp-stdio', 'tools', '--mode', 'record', '--', 'python3', 'mcp_server.py'], {}, MCP_CLIENT);
    expect(record.code, record.stderr).toBe(0);
    expect(record.stdout).toContain('echo hi');
    const replay = await run(['mcp-stdio', 'tools', '--mode', 'replay'], {}, MCP_CLIENT);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout.trim().split('\n').at(-1)!)).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { content: [{ type: 'text', text: 'echo hi' }] },
    });
  });

  it('runs the agent in the sandbox, the executable being its own bridge', { timeout: 120_000 }, async (ctx) => {
    if (!ready()) return ctx.skip();
    const probe = spawnSync('unshare', ['-Urn', '--pid', '--fork', '--kill-child', '--mount-proc', 'ip', 'link', 'set', 'lo', 'up']);
    if (probe.status !== 0) {
      console.log('the sandbox cannot run here (unshare -Urn failed): its case is skipped');
      return ctx.skip();
    }
    const sandboxed = await run([
      'record',
      'boxed',
      '--sandbox',
      '--route',
      `/openai=${upstream!.url}`,
      '--',
      'python3',
      'agent.py',
      'boxed',
    ]);
    expect(sandboxed.code, sandboxed.stderr).toBe(0);
    expect(sandboxed.stderr).toContain('in the sandbox');
    expect(sandboxed.stdout).toContain('echo: boxed');
  });

  if (python === null)
    it.skip('python3 is not installed: the single executable tests (their agent is Python) are skipped', () => undefined);
  if (why !== null) it.skip(`the single executable cannot be built here (${why}): its tests are skipped`, () => undefined);
});
