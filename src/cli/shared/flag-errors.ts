/**
 * What a command line `parseArgs` refused means, in one line a person can act on: an unknown flag is named with the
 * closest flag the command has and the list of its flags (node's own message advises `--` and quotes unevenly).
 */
import { editDistance } from '../../front/closest-route.js';
import type { Command } from './command.js';

/** `--dir DIR`, `--json`, `-t, --tape NAME`: how a flag is written on the command line. */
function flagName(name: string): string {
  return `--${name}`;
}

/** The command's flags, `--help` last. */
export function flagList(command: Command): string[] {
  return [...Object.keys(command.options).map(flagName), '--help'];
}

/**
 * The name among `names` closest to `asked` (a typo: a letter wrong, missing, extra, or two swapped), or undefined
 * when none is close: for flags and for commands alike.
 */
export function closestName(asked: string, names: readonly string[]): string | undefined {
  const a = asked.toLowerCase();
  if (a === '') return undefined;
  let best: { name: string; cost: number } | undefined;
  for (const name of names) {
    const cost = editDistance(a, name);
    // A prefix (`--wid` for `--width`) or a word inside (`--models` for `--model`) counts as close too.
    const near = name.startsWith(a) || a.startsWith(name) ? Math.min(cost, 1) : cost;
    if (best === undefined || near < best.cost) best = { name, cost: near };
  }
  if (best === undefined) return undefined;
  return best.cost <= Math.max(1, Math.floor(a.length / 3)) ? best.name : undefined;
}

/** The command's flag closest to `given` (a typo or a flag of another command), or undefined when none is close. */
export function closestFlag(command: Command, given: string): string | undefined {
  const near = closestName(given.replace(/^-+/, '').split('=')[0]!, Object.keys(command.options));
  return near === undefined ? undefined : flagName(near);
}

/** One line for an error `parseArgs` threw while reading `command`'s flags. */
export function explainFlagError(command: Command, err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const message = (e.message ?? String(err)).split('\n')[0] ?? '';
  const flags = `${command.name}'s flags: ${flagList(command).join(', ')}`;
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const given = /Unknown option '([^']+)'/.exec(message)?.[1] ?? message;
    const near = closestFlag(command, given);
    return `unknown flag ${given}${near !== undefined ? `: did you mean ${near}?` : ''} (${flags})`;
  }
  if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const given = /Unexpected argument '([^']+)'/.exec(message)?.[1] ?? message;
    return `unexpected argument "${given}" (${command.name} takes no arguments; ${flags})`;
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const missing = /Option '(-\S+)(?:, (-\S+))? <value>' argument missing/.exec(message);
    if (missing) return `${missing[2] ?? missing[1]} needs a value`;
    const noValue = /Option '(-\S+)(?:, (-\S+))?' does not take an argument/.exec(message);
    if (noValue) return `${noValue[2] ?? noValue[1]} takes no value`;
  }
  return message;
}
