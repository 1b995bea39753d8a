/* global AbortSignal */
// The examples kit's servers in the background, for the documentation's walkthroughs:
//
//   node examples/kit.mjs start    the LLM on 127.0.0.1:8901 (its Realtime API at /v1/realtime, a WebSocket) and the
//                                  MCP server on 127.0.0.1:8902/mcp; returns once
//                                  both answer. They stop when the shell that ran this ends (a pasted script leaves
//                                  nothing running), or with `stop`. Already running: says so, starts nothing.
//   node examples/kit.mjs stop     stop them
//   node examples/kit.mjs status   whether they run, and their pids
//
// The servers' log lines (`[kit-mcp] sent email to ...`: a side effect that really happened) go to this terminal.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const LLM = { name: 'LLM', port: 8901, script: 'llm.mjs', args: [], url: 'http://127.0.0.1:8901/v1' };
const MCP = { name: 'MCP server', port: 8902, script: 'mcp-server.mjs', args: ['--http'], url: 'http://127.0.0.1:8902/mcp' };
const SERVERS = [LLM, MCP];
const say = (line) => process.stdout.write(`kit: ${line}\n`);

/**
 * The kit server on `port`, as its `GET /` describes itself; undefined when nothing (or something else) answers. A
 * port nothing listens on is refused at once; a server that is only slow (a busy machine) gets 10 s to answer, so
 * `stop` never takes a slow server for none and leaves it running.
 */
async function probe(port) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(10_000) });
    const body = await res.json();
    return typeof body?.pid === 'number' && /tapedeck/.test(body.name ?? '') ? body : undefined;
  } catch {
    return undefined;
  }
}

async function start() {
  for (const s of SERVERS) {
    const running = await probe(s.port);
    if (running) {
      say(`the ${s.name} already runs at ${s.url} (pid ${running.pid})`);
      continue;
    }
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL(s.script, import.meta.url)), ...s.args, '--port', String(s.port), '--watch-pid', String(process.ppid)],
      { detached: true, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    child.unref();
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 15_000;
    let up;
    while (!(up = await probe(s.port))) {
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 100))]);
      if (code !== undefined || Date.now() > deadline) {
        process.stderr.write(
          `kit: the ${s.name} did not start on port ${s.port}${code !== undefined ? ` (it exited with ${code})` : ''}\n`,
        );
        process.exit(1);
      }
    }
    say(`the ${s.name} runs at ${s.url} (pid ${up.pid}) until this shell ends`);
  }
}

async function stop() {
  for (const s of SERVERS) {
    const running = await probe(s.port);
    if (!running) continue;
    process.kill(running.pid, 'SIGTERM');
    say(`stopped the ${s.name} (pid ${running.pid})`);
  }
}

async function status() {
  for (const s of SERVERS) {
    const running = await probe(s.port);
    say(running ? `the ${s.name} runs at ${s.url} (pid ${running.pid})` : `the ${s.name} is not running (port ${s.port})`);
  }
}

const commands = { start, stop, status };
const command = commands[process.argv[2] ?? ''];
if (command === undefined) {
  process.stderr.write('usage: node examples/kit.mjs start|stop|status\n');
  process.exit(2);
}
await command();
