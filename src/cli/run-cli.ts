import { parseArgs } from 'node:util';
import { isTapedeckError, type ErrorCode } from '../errors.js';
import { VERSION } from '../version.js';
import { COMMANDS, loadAllCommands } from './commands.js';
import { explainFlagError } from './flag-errors.js';
import type { Writable } from 'node:stream';
import type { Command } from './command.js';

/** What a person at the command line can do about an error the library reports (the library names no flags). */
const HINTS: Partial<Record<ErrorCode, string>> = {
  TAPE_EXISTS: 'pass --overwrite to replace it or --append to add to it',
  PORT_IN_USE: 'pick another with --port (0 takes any free port)',
  UNKNOWN_MODEL_PROVIDER: 'name the route it is for instead, e.g. --model /openai=MODEL',
};

/** Errors in what was asked for (exit 2), as opposed to failures while doing it (exit 1). */
const USAGE_ERRORS: ReadonlySet<ErrorCode> = new Set([
  'BAD_ARGS',
  'BAD_CONFIG',
  'PORT_IN_USE',
  'UNKNOWN_MODEL_PROVIDER',
  'TAPE_NOT_FOUND',
  'MISSING_CREDENTIALS',
]);

async function help(): Promise<string> {
  const commands = await loadAllCommands();
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `tapedeck ${VERSION}: record and replay the LLM and MCP traffic of any agent`,
    '',
    'usage: tapedeck COMMAND [flags]     (tapedeck COMMAND --help for its flags)',
    '',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
  ].join('\n');
}

/** Where a run of the CLI prints and what environment it reads: the process's own in `main.ts`. */
export interface CliIo {
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
}

/**
 * The CLI on an argument list: the command it names, its flags parsed and checked, its errors printed as one line;
 * resolves to the exit code. `main.ts` runs it on the process's arguments and streams; tests run it in-process.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write((await help()) + '\n');
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(VERSION + '\n');
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry === undefined) {
    io.stderr.write(`tapedeck: unknown command "${name}" (commands: ${COMMANDS.map((c) => c.name).join(', ')})\n`);
    return 2;
  }
  const command: Command = await entry.load();
  const dashdash = args.indexOf('--');
  const own = dashdash === -1 ? args : args.slice(0, dashdash);
  const rest = dashdash === -1 ? [] : args.slice(dashdash + 1);
  // `--step -1`: parseArgs refuses a negative number as a separate value; join it to its flag.
  for (let i = 0; i < own.length - 1; i++) {
    const flag = own[i] as string;
    if (/^--[\w-]+$/.test(flag) && command.options[flag.slice(2)]?.type === 'string' && /^-\d+$/.test(own[i + 1] as string))
      own.splice(i, 2, `${flag}=${own[i + 1]}`);
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: command.allowPositionals ?? false,
    });
  } catch (err) {
    io.stderr.write(`tapedeck ${name}: ${explainFlagError(command, err)}\n`);
    return 2;
  }
  if (parsed.values.help === true) {
    io.stdout.write(`${command.summary}\n\n${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run({
      values: parsed.values,
      positionals: parsed.positionals,
      rest,
      stdout: io.stdout,
      stderr: io.stderr,
      env: io.env,
    });
  } catch (err) {
    if (isTapedeckError(err)) {
      const hint =
        err.code === 'TAPE_EXISTS' && (name === 'push' || name === 'pull') ? 'pass --overwrite to replace them' : HINTS[err.code];
      io.stderr.write(`tapedeck ${name}: ${err.message}${hint ? `: ${hint}` : ''}\n`);
      return USAGE_ERRORS.has(err.code) ? 2 : 1;
    }
    io.stderr.write(`tapedeck ${name}: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}
