import { parseArgs } from 'node:util';
import { isTapedeckError, type ErrorCode, type TapedeckError } from '../errors.js';
import { styleFor, type Style } from '../inspect/format.js';
import { VERSION } from '../version.js';
import { COMMANDS, loadAllCommands } from './commands.js';
import { closestName, explainFlagError } from './shared/flag-errors.js';
import { notice } from './shared/notice.js';
import type { Writable } from 'node:stream';
import type { Command, OptionsConfig, ParsedValues } from './shared/command.js';

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
  // A tape already there (record without --overwrite or --append, push, pull): refused before anything is written.
  'TAPE_EXISTS',
  // A tape in a format this tapedeck cannot read (a newer one wrote it): refused, naming that tapedeck.
  'TAPE_FORMAT_UNSUPPORTED',
  'MISSING_CREDENTIALS',
]);

/** Commands that copy tapes between stores (an existing tape there is refused as a whole, and the hint says so). */
const TRANSFERS: ReadonlySet<string> = new Set(['push', 'pull']);

async function help(style: Style): Promise<string> {
  const commands = await loadAllCommands();
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    style.bold(`tapedeck ${VERSION}: record and replay the LLM and MCP traffic of any agent`),
    '',
    'usage: tapedeck COMMAND [TAPE] [flags]     (tapedeck COMMAND --help for its flags)',
    '',
    ...commands.map((c) => `  ${style.cyan(c.name.padEnd(width))}  ${c.summary}`),
  ].join('\n');
}

/**
 * A command's `--help`: its summary, then its usage with each flag or argument that starts an option line (indented
 * two spaces: `--route PREFIX=URL`, `NAME`, `A B`) picked out.
 */
function commandHelp(command: Command, style: Style): string {
  const term = /^( {2})((?:-[-\w]*|[A-Z][A-Z_]*(?: [A-Z]\b)?)(?:[ ,/]+-[-\w]+)*(?: [A-Z][A-Z_.|=]*)*)(?= {2}|$)/;
  const usage = command.usage
    .split('\n')
    .map((line) => line.replace(term, (_, pad: string, flag: string) => pad + style.cyan(flag)))
    .join('\n');
  return `${style.bold(command.summary)}\n\n${usage}`;
}

/** What a person can do about `err` from `command` (none when the error says it all). */
function hintFor(command: string, err: TapedeckError): string | undefined {
  if (err.code === 'TAPE_EXISTS' && TRANSFERS.has(command)) {
    const tapes = err.details?.tapes;
    return `pass --overwrite to replace ${Array.isArray(tapes) && tapes.length > 1 ? 'them' : 'it'}`;
  }
  return HINTS[err.code];
}

/** Old spellings of flags, folded into the flags that replaced them, each said once on stderr. */
function foldDeprecated(command: Command, values: ParsedValues, io: CliIo): void {
  for (const [name, old] of Object.entries(command.deprecated ?? {})) {
    if (values[name] === undefined) continue;
    notice(io, `--${name} is deprecated: use ${old.instead} (the old spelling still works for now)`, 'warn', `tapedeck ${command.name}`);
    old.fold(values);
    delete values[name];
  }
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
  const style = styleFor(io.stdout, io.env);
  // `tapedeck help COMMAND` is `tapedeck COMMAND --help`.
  if (name === 'help' && args.length === 1 && COMMANDS.some((c) => c.name === args[0])) return runCli([args[0] as string, '--help'], io);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write((await help(style)) + '\n');
    return 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(VERSION + '\n');
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry === undefined) {
    const names = COMMANDS.map((c) => c.name);
    const near = name.startsWith('-') ? undefined : closestName(name, names);
    notice(
      io,
      `unknown ${name.startsWith('-') ? 'flag' : 'command'} "${name}"${near !== undefined ? `: did you mean ${near}?` : ''} (commands: ${names.join(', ')})`,
      'error',
    );
    return 2;
  }
  const command: Command = await entry.load();
  const deprecated: OptionsConfig = Object.fromEntries(Object.entries(command.deprecated ?? {}).map(([k, d]) => [k, d.option]));
  const dashdash = args.indexOf('--');
  const own = dashdash === -1 ? args : args.slice(0, dashdash);
  const rest = dashdash === -1 ? [] : args.slice(dashdash + 1);
  // `--step -1`: parseArgs refuses a negative number as a separate value; join it to its flag.
  for (let i = 0; i < own.length - 1; i++) {
    const flag = own[i] as string;
    const option = command.options[flag.slice(2)] ?? deprecated[flag.slice(2)];
    if (/^--[\w-]+$/.test(flag) && option?.type === 'string' && /^-\d+$/.test(own[i + 1] as string))
      own.splice(i, 2, `${flag}=${own[i + 1]}`);
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
      options: { ...command.options, ...deprecated, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: command.allowPositionals ?? false,
    });
  } catch (err) {
    notice(io, explainFlagError(command, err), 'error', `tapedeck ${name}`);
    return 2;
  }
  if (parsed.values.help === true) {
    io.stdout.write(`${commandHelp(command, style)}\n`);
    return 0;
  }
  foldDeprecated(command, parsed.values, io);
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
      const hint = hintFor(name, err);
      notice(io, `${err.message}${hint ? `: ${hint}` : ''}`, 'error', `tapedeck ${name}`);
      return USAGE_ERRORS.has(err.code) ? 2 : 1;
    }
    notice(io, (err as Error).stack ?? String(err), 'error', `tapedeck ${name}`);
    return 1;
  }
}
