/**
 * Wrapper mode leaves no processes behind. The command runs as the leader of a process group of its own (a session
 * of its own: `detached`, Node's only way to a new group), so that everything it starts without leaving that group
 * can be signalled and ended together:
 * - signals tapedeck gets (SIGINT, SIGTERM, SIGHUP) go to the whole group, once each;
 * - when the command exits, whatever is left of its group gets SIGTERM, then SIGKILL after a grace period;
 * - when tapedeck itself dies, even by `kill -9`, a watchdog ends the group. The watchdog is a POSIX `sh` reading a
 *   pipe whose other end only tapedeck holds: the kernel closes it when tapedeck dies, however it dies, and the
 *   watchdog wakes at once (no polling, no pid that could be reused). A parent-death signal (`setpriv --pdeathsig`)
 *   would reach the command only, not what it started, and exists on Linux only; the watchdog covers the group, on
 *   Linux and macOS alike.
 * A process that leaves the group (`setsid`) and re-parents away escapes all three; only the sandbox's PID namespace
 * (`sandbox.ts`) guarantees that nothing outlives tapedeck. On Windows the command is spawned as before.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import type { Writable } from 'node:stream';

/** Whether commands get a process group of their own here (POSIX only). */
export const OWN_GROUP = process.platform !== 'win32';

/** How long what is left of the group has after SIGTERM before SIGKILL. */
const GRACE_MS = 1000;

/** The spawn options that give the command its own process group. */
export function groupSpawnOptions(): Pick<SpawnOptions, 'detached'> {
  return OWN_GROUP ? { detached: true } : {};
}

// $1 is the group. A line on stdin means tapedeck is done and ended the group itself; end of file means it is gone.
const WATCHDOG = 'if read -r _; then exit 0; fi; kill -TERM "-$1" 2>/dev/null || exit 0; sleep 1; kill -KILL "-$1" 2>/dev/null; exit 0';

/**
 * The watchdog of a command's group. Start it in the same synchronous step that spawns the command (before any
 * `await`, the `spawn` event included): a `kill -9` of tapedeck in the command's first milliseconds must find it
 * running. The group is its argument, not a line written to it: a write to a child's pipe may still sit in
 * tapedeck's queue when tapedeck dies. What remains is the time to fork the watchdog after the command started
 * (a few milliseconds on a loaded machine): a `kill -9` of tapedeck inside it leaves the command running.
 */
export interface Watchdog {
  /** Stop the watchdog: tapedeck ended the group itself. */
  stop(): void;
}

/** Start a watchdog for the group `pgid` (POSIX only; undefined where there are no groups, no pid or no `sh`). */
export function startWatchdog(pgid: number | undefined): Watchdog | undefined {
  if (!OWN_GROUP || pgid === undefined) return undefined;
  let proc: ChildProcess;
  try {
    proc = spawn('sh', ['-c', WATCHDOG, 'tapedeck-watchdog', String(pgid)], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  } catch {
    return undefined; // no sh: the group is still ended on every exit tapedeck lives to see
  }
  proc.on('error', () => undefined);
  proc.stdin?.on('error', () => undefined);
  // It must never keep tapedeck running.
  proc.unref();
  (proc.stdin as { unref?: () => void } | null)?.unref?.();
  return { stop: () => void (proc.stdin as Writable | null)?.end('done\n') };
}

export interface ProcessGroup {
  /** Send a signal to every process of the group (to the command alone where there are no groups). */
  signal(signal: NodeJS.Signals): void;
  /** After the command exited: end what is left of its group (SIGTERM, then SIGKILL), and stop the watchdog. */
  end(): Promise<void>;
}

/** Supervise a command spawned with `groupSpawnOptions()`, watched by `watchdog` (from `startWatchdog(child.pid)`). */
export function superviseGroup(child: ChildProcess, watchdog: Watchdog | undefined): ProcessGroup {
  const pgid = child.pid;
  if (!OWN_GROUP || pgid === undefined) {
    watchdog?.stop();
    return { signal: (s) => void child.kill(s), end: async () => undefined };
  }
  const alive = (): boolean => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
  const send = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-pgid, signal);
    } catch {
      // the group is gone
    }
  };
  let ended: Promise<void> | undefined;
  return {
    signal: send,
    end: () => (ended ??= endGroup()),
  };

  async function endGroup(): Promise<void> {
    if (alive()) {
      send('SIGTERM');
      const until = Date.now() + GRACE_MS;
      while (alive() && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
      if (alive()) send('SIGKILL');
    }
    watchdog?.stop();
  }
}
