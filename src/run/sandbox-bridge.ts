/**
 * Runs inside the sandbox's namespaces (started by `unshare`, see `sandbox.ts`), as process 1 of its PID namespace:
 * brings loopback up, listens on HOST:PORT (the address the agent was told tapedeck has) and passes each connection,
 * byte for byte, to tapedeck's unix socket outside; then runs the command and exits with its code.
 *
 * usage: node sandbox-bridge.js SOCKET HOST PORT -- COMMAND ARGS...
 */
import { spawn, spawnSync } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { constants } from 'node:os';

const [socketPath, host, portText, dashdash, command, ...args] = process.argv.slice(2);
if (socketPath === undefined || host === undefined || portText === undefined || dashdash !== '--' || command === undefined) {
  process.stderr.write('tapedeck sandbox: usage: sandbox-bridge SOCKET HOST PORT -- COMMAND ARGS...\n');
  process.exit(125);
}

const lo = spawnSync('ip', ['link', 'set', 'lo', 'up'], { encoding: 'utf8' });
if (lo.status !== 0) {
  const why = (lo.stderr || lo.error?.message || `exit ${lo.status}`).trim().split('\n')[0];
  process.stderr.write(`tapedeck sandbox: cannot bring up loopback in the sandbox (ip link set lo up: ${why})\n`);
  process.exit(125);
}

const bridge = createServer((inside) => {
  const outside = connect(socketPath);
  inside.pipe(outside).on('error', () => inside.destroy());
  outside.pipe(inside).on('error', () => outside.destroy());
  inside.on('error', () => outside.destroy());
  outside.on('error', () => inside.destroy());
  inside.on('close', () => outside.destroy());
  outside.on('close', () => inside.destroy());
});
bridge.on('error', (err) => {
  process.stderr.write(`tapedeck sandbox: cannot listen on ${host}:${portText} in the sandbox (${err.message})\n`);
  process.exit(125);
});
bridge.listen(Number(portText), host, () => {
  const child = spawn(command, args, { stdio: 'inherit' });
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
