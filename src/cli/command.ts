import type { ParseArgsConfig } from 'node:util';
import type { Writable } from 'node:stream';

export type OptionsConfig = NonNullable<ParseArgsConfig['options']>;
export type ParsedValues = Record<string, string | boolean | string[] | boolean[] | undefined>;

/** What a command gets: parsed flags, positionals, arguments after `--`, and where to print. */
export interface CommandContext {
  values: ParsedValues;
  positionals: string[];
  /** Everything after a bare `--` (e.g. the server command for `mcp-stdio`). */
  rest: string[];
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
}

/** One CLI command: parsing and printing only; the work lives in the library modules. */
export interface Command {
  name: string;
  summary: string;
  /** Usage lines shown by `tapedeck NAME --help`. */
  usage: string;
  options: OptionsConfig;
  allowPositionals?: boolean;
  /** Resolves to the process exit code. Long-running commands resolve when they stop. */
  run(ctx: CommandContext): Promise<number>;
}

export function stringValue(values: ParsedValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function stringList(values: ParsedValues, name: string): string[] {
  const v = values[name];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return typeof v === 'string' ? [v] : [];
}
