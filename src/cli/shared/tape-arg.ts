/**
 * The tape a command works on, one convention for every command: the tape comes first, as an argument
 * (`tapedeck show run`, `tapedeck record run -- node agent.js`, `tapedeck diff A B`), and wherever a command takes
 * one tape `--tape NAME` (`-t NAME`) says the same, as record and replay always took it. Neither is deprecated.
 */
import { TapedeckError } from '../../errors.js';
import { stringValue, type CommandContext, type OptionsConfig } from './command.js';

/** `--tape NAME`: the tape argument spelt as a flag. */
export const TAPE_OPTION: OptionsConfig = { tape: { type: 'string', short: 't' } };

/**
 * The one tape named by `positionals` (what is left of the command's arguments) or by `--tape`; undefined when
 * neither names one. Two tapes, or an argument and a `--tape` that differ, are refused with `usage`.
 */
export function tapeArgument(ctx: CommandContext, usage: string, positionals: readonly string[] = ctx.positionals): string | undefined {
  const flag = stringValue(ctx.values, 'tape');
  const [given, ...extra] = positionals;
  if (extra.length > 0) throw new TapedeckError('BAD_ARGS', `one tape only (got ${positionals.length}): ${usage}`);
  if (given !== undefined && flag !== undefined && given !== flag)
    throw new TapedeckError('BAD_ARGS', `two tapes given, "${given}" and --tape "${flag}": name one (${usage})`);
  return given ?? flag;
}

/** Like `tapeArgument`, for a command that cannot run without its tape. */
export function requiredTape(ctx: CommandContext, usage: string, positionals: readonly string[] = ctx.positionals): string {
  const tape = tapeArgument(ctx, usage, positionals);
  if (tape === undefined) throw new TapedeckError('BAD_ARGS', `a tape is required: ${usage}`);
  return tape;
}
