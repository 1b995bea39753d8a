/**
 * The sandbox's bridge as a script of its own (`node sandbox-bridge.js SOCKET HOST PORT -- COMMAND ARGS...`, started
 * by `sandbox.ts`): a process that loads only the bridge (bridge.ts), not the CLI.
 */
import { runSandboxBridge } from './bridge.js';

runSandboxBridge(process.argv.slice(2));
