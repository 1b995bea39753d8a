/**
 * How a command that serves (record, replay, serve, view) learns it should stop: SIGINT or SIGTERM, or the end of
 * the `npx` / `npm exec` that started it. npm exec does not pass SIGTERM on to the command it runs, so killing it
 * (a test runner stopping `npx tapedeck serve`, a script's `kill $!`) would leave tapedeck running with its tapes
 * open; when npm exec is the parent and goes, tapedeck stops as if signalled. A tapedeck started otherwise (a
 * shell, nohup, a service manager) keeps running when its parent goes.
 */
import type { Logger } from '../../log.js';

/** How often the parent is checked when npm exec started us. */
const PARENT_POLL_MS = 500;

/** Resolves once, with why: the signal, or `parent-gone`. Install before announcing "listening". */
export function untilStopped(log: Logger): Promise<NodeJS.Signals | 'parent-gone'> {
  return new Promise((resolve) => {
    const parent = process.ppid;
    let poll: NodeJS.Timeout | undefined;
    const stop = (why: NodeJS.Signals | 'parent-gone'): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      clearInterval(poll);
      log.info({ signal: why }, 'stopping');
      resolve(why);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (process.env.npm_command === 'exec' && process.platform !== 'win32') {
      poll = setInterval(() => {
        if (process.ppid !== parent) stop('parent-gone');
      }, PARENT_POLL_MS);
      poll.unref();
    }
  });
}
