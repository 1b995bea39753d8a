/**
 * The no-egress sandbox (Linux): the command runs in a user + network namespace of its own (`unshare -Urn`), where
 * the only interface is a loopback of its own. There, a bridge listens on the address the agent was told tapedeck
 * has and passes each connection to tapedeck over a unix socket (a path in the file system, reachable from any
 * network namespace). Anything else the agent tries, a direct connection to any address, fails: the kernel has no
 * route for it. Where namespaces are unavailable, starting fails with one line that says why; there is no fallback.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TapedeckError } from '../errors.js';
import { insideExecutable } from '../shipped.js';
import { SANDBOX_BRIDGE_COMMAND } from './bridge.js';
import type { Launch } from './run-under.js';
import type { RunningProxy } from '../front/server.js';

/**
 * A user, network, PID and mount namespace of the command's own. In its own PID namespace the bridge is process 1:
 * when it exits (the command did), the kernel ends every process left in the namespace, daemons that left their
 * process group with `setsid` included; and `--kill-child` ends the bridge when `unshare` dies (tapedeck's watchdog
 * ends `unshare` when tapedeck dies, even by `kill -9`). `--mount-proc` gives the namespace a `/proc` of its own.
 */
const UNSHARE = ['-Urn', '--pid', '--fork', '--kill-child', '--mount-proc'];

/** Whether the sandbox can run here; the reason when it cannot. */
export function sandboxSupport(): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux') return { ok: false, reason: `network namespaces are Linux only (this is ${process.platform})` };
  const probe = spawnSync('unshare', [...UNSHARE, 'ip', 'link', 'set', 'lo', 'up'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error !== undefined) {
    const code = (probe.error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? 'unshare (util-linux) is not installed' : probe.error.message };
  }
  if (probe.status !== 0) {
    const said = (probe.stderr || `exit ${probe.status}`).trim().split('\n')[0] ?? '';
    const why = /ip: (not found|No such file)|exec ip|failed to execute ip/i.test(said)
      ? 'the ip command (iproute2) is not installed'
      : /unrecognized option|invalid option/i.test(said)
        ? `this unshare is too old (it needs --kill-child, util-linux 2.32 or later: ${said})`
        : `user, network and PID namespaces are not available to this user (${said})`;
    return { ok: false, reason: why };
  }
  return { ok: true };
}

/** A `launch` for `runUnder` that runs the command in the sandbox. Throws SANDBOX_UNAVAILABLE where it cannot. */
export async function sandboxLaunch(cmd: { command: string; args: readonly string[]; proxy: RunningProxy }): Promise<Launch> {
  const support = sandboxSupport();
  if (!support.ok) throw new TapedeckError('SANDBOX_UNAVAILABLE', `the sandbox cannot run here: ${support.reason}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-sandbox-'));
  const socketPath = path.join(dir, 'tapedeck.sock');
  const sockets = new Set<Socket>();
  const server: Server = createServer((inside) => {
    const outside = connect(cmd.proxy.port, cmd.proxy.host);
    sockets.add(inside).add(outside);
    inside.pipe(outside);
    outside.pipe(inside);
    for (const [a, b] of [
      [inside, outside],
      [outside, inside],
    ] as const) {
      a.on('error', () => b.destroy());
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, resolve);
  });
  return {
    command: 'unshare',
    args: [...UNSHARE, '--', ...bridgeCommand(), socketPath, cmd.proxy.host, String(cmd.proxy.port), '--', cmd.command, ...cmd.args],
    async cleanup() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * How the bridge starts (bridge.ts): the single executable runs itself with a hidden command (its `process.execPath`
 * is tapedeck, not Node); Node runs the bridge's own script beside this module, with the same loader flags (tsx in
 * development).
 */
function bridgeCommand(): string[] {
  if (insideExecutable()) return [process.execPath, SANDBOX_BRIDGE_COMMAND];
  const here = fileURLToPath(import.meta.url);
  return [process.execPath, ...loaderFlags(process.execArgv), path.join(path.dirname(here), `sandbox-bridge${path.extname(here)}`)];
}

/** The flags that load code (`--import tsx` in development), without the rest (`--inspect` would clash). */
function loaderFlags(execArgv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i] as string;
    if (/^--(import|loader|experimental-loader|require)=/.test(a)) out.push(a);
    else if (/^(--import|--loader|--experimental-loader|--require|-r)$/.test(a) && i + 1 < execArgv.length)
      out.push(a, execArgv[++i] as string);
  }
  return out;
}
