import { TapedeckError } from '../../errors.js';
import { MIN_WIDTH, outputWidth } from '../../inspect/format.js';
import { stringValue, type CommandContext, type OptionsConfig } from './command.js';

/** `--width N` / `--wide` for every command that lays out lines (timelines, listings, diffs). */
export const WIDTH_OPTIONS: OptionsConfig = {
  width: { type: 'string' },
  wide: { type: 'boolean' },
};

export const WIDTH_USAGE = [
  '  --width N            lay out for N columns (default: the terminal, else COLUMNS, else 100)',
  '  --wide               never cut a line (for grep, logs, wide terminals)',
].join('\n');

/** The width to lay out for: `--width N`, `--wide` (no limit), else the terminal's or `COLUMNS`. */
export function layoutWidth(ctx: CommandContext): number {
  const asked = stringValue(ctx.values, 'width');
  const wide = ctx.values.wide === true;
  if (asked !== undefined && wide) throw new TapedeckError('BAD_ARGS', '--width and --wide are exclusive: pick one');
  if (wide) return outputWidth(ctx.stdout, ctx.env, Infinity);
  if (asked === undefined) return outputWidth(ctx.stdout, ctx.env);
  if (!/^\d+$/.test(asked) || Number(asked) < MIN_WIDTH)
    throw new TapedeckError('BAD_ARGS', `--width needs a whole number of columns, ${MIN_WIDTH} or more (got "${asked}")`);
  return Number(asked);
}
