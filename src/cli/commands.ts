import type { Command } from './shared/command.js';

/**
 * Every CLI command by name, in the order `tapedeck --help` lists them. A command's module (and everything it needs:
 * the proxy, the PostgreSQL client, the viewer, OpenTelemetry...) is loaded only when that command runs, so
 * `tapedeck --version` or `tapedeck list` does not load what `record` needs. Add one entry per command.
 */
export const COMMANDS: readonly { name: string; load: () => Promise<Command> }[] = [
  { name: 'record', load: async () => (await import('./record.js')).recordCommand },
  { name: 'replay', load: async () => (await import('./replay.js')).replayCommand },
  { name: 'serve', load: async () => (await import('./serve.js')).serveCommand },
  { name: 'mcp-stdio', load: async () => (await import('./mcp-stdio.js')).mcpStdioCommand },
  { name: 'side-effects', load: async () => (await import('./side-effects.js')).sideEffectsCommand },
  { name: 'list', load: async () => (await import('./list.js')).listCommand },
  { name: 'show', load: async () => (await import('./show.js')).showCommand },
  { name: 'diff', load: async () => (await import('./diff.js')).diffCommand },
  { name: 'cost', load: async () => (await import('./cost.js')).costCommand },
  { name: 'experiment', load: async () => (await import('./experiment.js')).experimentCommand },
  { name: 'drift', load: async () => (await import('./drift.js')).driftCommand },
  { name: 'rm', load: async () => (await import('./rm.js')).rmCommand },
  { name: 'prune', load: async () => (await import('./prune.js')).pruneCommand },
  { name: 'push', load: async () => (await import('./transfer.js')).pushCommand },
  { name: 'pull', load: async () => (await import('./transfer.js')).pullCommand },
  { name: 'scan', load: async () => (await import('./scan.js')).scanCommand },
  { name: 'view', load: async () => (await import('./view.js')).viewCommand },
  { name: 'export', load: async () => (await import('./export.js')).exportCommand },
  { name: 'ca', load: async () => (await import('./ca.js')).caCommand },
];

/** Every command, loaded (for `tapedeck --help`, which lists their summaries). */
export function loadAllCommands(): Promise<Command[]> {
  return Promise.all(COMMANDS.map((c) => c.load()));
}
