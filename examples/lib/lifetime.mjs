// How the kit's servers end: on Ctrl-C / SIGTERM, and when the shell (or script) that started them goes away, so
// that a walkthrough pasted into a script never leaves one running. That shell is the parent (`node
// examples/llm.mjs &`), or the pid given with --watch-pid (`node examples/kit.mjs start` starts the servers
// detached and names its own shell). Node reads the parent pid afresh on every `process.ppid`.

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Close with `close()` and exit 0 on SIGINT, SIGTERM, or when the watched process (default: the parent) ends. */
export function stopWithParent(close, watchPid) {
  const parent = process.ppid;
  const gone = watchPid ? () => !alive(watchPid) : () => process.ppid !== parent;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    Promise.resolve(close()).finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  setInterval(() => {
    if (gone()) stop();
  }, 250).unref();
}

/** Import the built tapedeck module at `path` (below dist/), or say how to build it. */
export async function fromDist(path) {
  try {
    return await import(new URL(`../../dist/${path}`, import.meta.url));
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    process.stderr.write(`examples: dist/${path} is missing: run npm ci (or npm run build) in the tapedeck clone first\n`);
    process.exit(1);
  }
}
