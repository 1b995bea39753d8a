import type { Command } from './command.js';
import { recordCommand } from './record.js';
import { replayCommand } from './replay.js';
import { serveCommand } from './serve.js';
import { mcpStdioCommand } from './mcp-stdio.js';
import { sideEffectsCommand } from './side-effects.js';
import { listCommand } from './list.js';
import { showCommand } from './show.js';
import { diffCommand } from './diff.js';
import { rmCommand } from './rm.js';
import { pruneCommand } from './prune.js';
import { scanCommand } from './scan.js';
import { viewCommand } from './view.js';
import { exportCommand } from './export.js';
import { caCommand } from './ca.js';
import { costCommand } from './cost.js';
import { experimentCommand } from './experiment.js';
import { driftCommand } from './drift.js';
import { pullCommand, pushCommand } from './transfer.js';

/** Every CLI command, in the order `tapedeck --help` lists them. Add one import and one entry per command. */
export const COMMANDS: readonly Command[] = [
  recordCommand,
  replayCommand,
  serveCommand,
  mcpStdioCommand,
  sideEffectsCommand,
  listCommand,
  showCommand,
  diffCommand,
  costCommand,
  experimentCommand,
  driftCommand,
  rmCommand,
  pruneCommand,
  pushCommand,
  pullCommand,
  scanCommand,
  viewCommand,
  exportCommand,
  caCommand,
];
