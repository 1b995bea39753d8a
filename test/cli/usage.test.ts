/**
 * Every command's `--help` names every flag it parses (a flag added without a word in the usage is found here), and
 * no flag a command no longer takes; deprecated spellings are not advertised.
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';

describe('usage text', () => {
  it.for(COMMANDS.map((c) => c.name))('tapedeck %s --help names every flag the command parses', async (name) => {
    const command = await COMMANDS.find((c) => c.name === name)!.load();
    const named = new Set(command.usage.match(/--[a-z][\w-]*/g) ?? []);
    const missing = Object.keys(command.options).filter((flag) => !named.has(`--${flag}`));
    expect(missing, `${name}'s usage lacks these flags`).toEqual([]);
    for (const old of Object.keys(command.deprecated ?? {})) expect(named.has(`--${old}`), `--${old} is deprecated`).toBe(false);
    // And names no flag it does not take (a flag removed, or misspelt in the text).
    const parsed = new Set([...Object.keys(command.options), 'help'].map((f) => `--${f}`));
    const unknown = [...named].filter((flag) => !parsed.has(flag) && !OTHER_COMMANDS_FLAGS.has(flag));
    expect(unknown, `${name}'s usage names flags it does not parse`).toEqual([]);
  });
});

/** Flags a usage text mentions as another command's (side-effects init points at `tapedeck replay --side-effects FILE`). */
const OTHER_COMMANDS_FLAGS = new Set(['--side-effects']);
