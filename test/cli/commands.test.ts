import { describe, expect, it } from 'vitest';
import { COMMANDS, loadAllCommands } from '../../src/cli/commands.js';

describe('the command table', () => {
  it('loads, for every name, the command of that name (each module only when asked for)', async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect(command.name).toBe(entry.name);
      expect(typeof command.run).toBe('function');
    }
    expect(new Set(COMMANDS.map((c) => c.name)).size).toBe(COMMANDS.length);
    expect((await loadAllCommands()).map((c) => c.name)).toEqual(COMMANDS.map((c) => c.name));
  });
});
