#!/usr/bin/env node
import { runSandboxBridge, SANDBOX_BRIDGE_COMMAND } from '../run/bridge.js';
import { insideExecutable } from '../shipped.js';
import { runCli } from './run-cli.js';

/**
 * `tapedeck show T | head -3`: the reader went away. Writes to that stream are dropped from then on and the command
 * finishes its work (a `prune` still removes every tape it named) and exits as it would have, without a stack trace.
 */
function dropWritesOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}
dropWritesOnClosedPipe(process.stdout);
dropWritesOnClosedPipe(process.stderr);

// The single executable's sandbox bridge (run/bridge.ts): tapedeck runs itself inside the sandbox with this hidden command.
if (insideExecutable() && process.argv[2] === SANDBOX_BRIDGE_COMMAND) runSandboxBridge(process.argv.slice(3));
else runMain();

function runMain(): void {
  runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`tapedeck: ${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
