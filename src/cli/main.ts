#!/usr/bin/env node
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

runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`tapedeck: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
