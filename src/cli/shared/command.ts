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

/**
 * An old spelling of a flag that users' scripts and CI files still use: parsed as it always was, then folded into
 * the flag that replaced it, with a one-line notice on stderr (`run-cli.ts`). Not listed in the command's flags.
 */
export interface DeprecatedFlag {
  option: OptionsConfig[string];
  /** What to write instead, as the notice says it: `--live-route ROUTE`, `--fail-on divergence`. */
  instead: string;
  /** Fold the old flag's value (`values[name]`) into the values of the flag that replaced it. */
  fold(values: ParsedValues): void;
}

/** One CLI command: parsing and printing only; the work lives in the library modules. */
export interface Command {
  name: string;
  summary: string;
  /** Usage lines shown by `tapedeck NAME --help`. */
  usage: string;
  options: OptionsConfig;
  /** Old spellings still accepted, by flag name (without `--`). */
  deprecated?: Record<string, DeprecatedFlag>;
  allowPositionals?: boolean;
  /** Resolves to the process exit code. Long-running commands resolve when they stop. */
  run(ctx: CommandContext): Promise<number>;
}

export function stringValue(values: ParsedValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

/** `--old VALUE...` as more values of `--new` (a repeatable string flag renamed). */
export function renamedList(from: string, to: string): (values: ParsedValues) => void {
  return (values) => {
    values[to] = [...stringList(values, to), ...stringList(values, from)];
  };
}

export function stringList(values: ParsedValues, name: string): string[] {
  const v = values[name];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return typeof v === 'string' ? [v] : [];
}
