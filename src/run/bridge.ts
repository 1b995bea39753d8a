/**
 * The sandbox's bridge. Runs inside the sandbox's namespaces (started by `unshare`, see `sandbox.ts`), as process 1 of
 * its PID namespace: brings loopback up, listens on HOST:PORT (the address the agent was told tapedeck has) and passes
 * each connection, byte for byte, to tapedeck's unix socket outside; then runs the command and exits with its code.
 *
 * Started as `node sandbox-bridge.js SOCKET HOST PORT -- COMMAND ARGS...` (the file beside this one), or, in the single
 * executable, where `process.execPath` is tapedeck itself, as `tapedeck __sandbox-bridge SOCKET ...` (a hidden command,
 * cli/main.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { constants } from 'node:os';

/** The hidden command the single executable runs its bridge as. */
export const SANDBOX_BRIDGE_COMMAND = '__sandbox-bridge';

/** Run the bridge: `args` are SOCKET HOST PORT -- COMMAND ARGS...; the process exits with the command's code. */
export function runSandboxBridge(args: readonly string[]): void {
  const [socketPath, host, portText, dashdash, command, ...rest] = args;
  if (socketPath === undefined || host === undefined || portText === undefined || dashdash !== '--' || command === undefined) {
    process.stderr.write('tapedeck sandbox: usage: sandbox-bridge SOCKET HOST PORT -- COMMAND ARGS...\n');
    process.exit(125);
  }
  bringUpLoopback();
  bridge(socketPath, host, portText, command, rest);
}

function bringUpLoopback(): void {
  const lo = spawnSync('ip', ['link', 'set', 'lo', 'up'], { encoding: 'utf8' });
  if (lo.status !== 0) {
    const why = (lo.stderr || lo.error?.message || `exit ${lo.status}`).trim().split('\n')[0];
    process.stderr.write(`tapedeck sandbox: cannot bring up loopback in the sandbox (ip link set lo up: ${why})\n`);
    process.exit(125);
  }
}

/** Listen on HOST:PORT, pass each connection to tapedeck's socket, and run the command once listening. */
function bridge(socketPath: string, host: string, portText: string, command: string, args: readonly string[]): void {
  const server = createServer((inside) => {
    const outside = connect(socketPath);
    inside.pipe(outside).on('error', () => inside.destroy());
    outside.pipe(inside).on('error', () => outside.destroy());
    inside.on('error', () => outside.destroy());
    outside.on('error', () => inside.destroy());
    inside.on('close', () => outside.destroy());
    outside.on('close', () => inside.destroy());
  });
  server.on('error', (err) => {
    process.stderr.write(`tapedeck sandbox: cannot listen on ${host}:${portText} in the sandbox (${err.message})\n`);
    process.exit(125);
  });
  server.listen(Number(portText), host, () => {
    const child = spawn(command, [...args], { stdio: 'inherit' });
    // tapedeck signals the command's whole process group, this bridge included: the command has the signal already, so
    // the bridge only stays up (it is the namespace's process 1: when it exits, everything in the namespace ends).
    process.on('SIGINT', () => undefined);
    process.on('SIGTERM', () => undefined);
    process.on('SIGHUP', () => undefined);
    child.once('error', (err: NodeJS.ErrnoException) => {
      process.stderr.write(`tapedeck sandbox: cannot run ${command}: ${err.code === 'ENOENT' ? 'command not found' : err.message}\n`);
      process.exit(127);
    });
    child.once('exit', (code, signal) => {
      process.exit(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0));
    });
  });
}
