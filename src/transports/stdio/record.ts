/**
 * Record an MCP stdio server: spawn it, relay stdin/stdout byte for byte (stderr passes through as logging; both ways
 * wait for `drain`), and record each client message with what the server sent for it as an exchange (see
 * `exchange.ts`). Record is the engine's path with every call decided live: each client message is settled when it
 * comes (`engine/settle.ts`'s `decideCall`: a live decision, its tee opened), and its tee commits its record when the
 * server has answered, before the client gets the answer: the server's bytes that carry an answer are relayed once
 * its record is on the tape (what a client has, the tape has first; when the tape cannot take it, the relay stops,
 * unless `whenTapeFails: serve`). The lines are read beside the relay, with the line limit: an over-long line is still
 * relayed (the server judges it) but not recorded, and one line on stderr says so.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../log.js';
import { createExchangeLog } from '../../engine/exchange-log.js';
import { roundMs } from '../../tape/timing.js';
import type { TapeWriter } from '../../tape/stores/tape-writer.js';
import type { Arrival, Call } from '../../engine/call.js';
import type { Answer } from '../../engine/record.js';
import type { Decision } from '../../engine/decision.js';
import { decideCall, type Decided, type SettleContext } from '../../engine/settle.js';
import type { TapeFailurePolicy } from '../../engine/tape-failure.js';
import type { Message, RequestId } from '../../providers/mcp.js';
import { isRequestMessage, parseRpcBody } from '../../providers/mcp-batch.js';
import { LineReader, lineTooLongMessage } from './line-reader.js';
import { OpenRequests, type OpenRequest } from './open-requests.js';
import { acceptedAnswer, stdioAnswer, stdioCall, type StdioRoute } from './exchange.js';

export interface StdioRecordOptions {
  command: string;
  args: readonly string[];
  /** Route name on the tape. */
  name: string;
  writer: TapeWriter;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** The longest line recorded, in bytes (default 10 MB). */
  maxLineBytes?: number;
  /** Once the tape cannot be written: stop relaying what could not be recorded (`refuse`, the default) or relay it. */
  onTapeFailure?: TapeFailurePolicy;
}

/** How long a server may take to exit after its stdin closed before it gets SIGTERM. */
const STOP_GRACE_MS = 2000;

interface Open extends OpenRequest {
  /** The request settled live when it came: its tee records its answer. */
  decided: Promise<Decided<Decision>>;
}

/** Runs until the server exits (or the client closes stdin and the server then exits); resolves with the server's exit code. */
export async function recordStdio(opts: StdioRecordOptions): Promise<number> {
  const { writer, log } = opts;
  const upstream = [opts.command, ...opts.args].join(' ');
  const open = new OpenRequests<Open>();
  const out = createExchangeLog(writer, log);
  const ctx: SettleContext = { log: out, onTapeFailure: opts.onTapeFailure };
  const route: StdioRoute = { name: opts.name, upstream };
  const arrival = (): Arrival => ({ startedAt: new Date(), offsetMs: writer.now(), t0: performance.now() });
  /** A call settled live (no fault acts in stdio record: `mcp-stdio` refuses rules there). */
  const live = (call: Call, notes?: Record<string, unknown>): Promise<Decided<Decision>> => {
    const decision: Decision = { from: 'live', ...(notes ? { notes } : {}) };
    return decideCall({ injected: () => decision, decide: () => decision, recorded: () => ({ call }) }, ctx);
  };
  /** Commit `answer` through the call's tee; tracked, so shutdown waits for it. Resolves true once it is on the tape. */
  const commit = (decided: Promise<Decided<Decision>>, answer: Answer): Promise<boolean> => {
    const committed = decided.then((d) => d.tee.commit(answer));
    out.track(committed);
    return committed;
  };

  const child = spawn(opts.command, [...opts.args], { stdio: ['pipe', 'pipe', 'inherit'], env: opts.env ?? process.env });
  const exited = new Promise<number>((resolve) => {
    child.once('error', (err) => {
      opts.stderr.write(`tapedeck mcp-stdio: cannot start ${upstream}: ${err.message}\n`);
      resolve(127);
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 + 15 : 1)));
  });

  const onClient = (line: string): void => {
    const parsed = parseRpcBody(line);
    const at = arrival();
    if (!parsed.ok) {
      // Not ours to judge in record mode: the server sees it and answers; we record what it was.
      void commit(live(stdioCall(route, at, undefined, { body: { kind: 'text', text: line } })), acceptedAnswer());
      return;
    }
    // A batch is recorded message by message, each as if it had been sent alone (see providers/mcp-batch.ts).
    for (const [index, msg] of (parsed.messages as Message[]).entries()) {
      const notes = parsed.batch ? { batch: { index, size: parsed.messages.length } } : undefined;
      const decided = live(stdioCall(route, at, msg), notes);
      if (isRequestMessage(msg)) open.add(msg.id as RequestId, { message: msg, t0: performance.now(), events: [], decided });
      else void commit(decided, acceptedAnswer());
    }
  };

  /** A line from the server: an answer's record is committed (`commits`) before the bytes that carry it are relayed. */
  const onServer = (line: string, commits: Promise<boolean>[]): void => {
    const parsed = parseRpcBody(line);
    if (!parsed.ok) {
      log.warn({ line: line.slice(0, 200) }, 'server wrote a line that is not JSON-RPC');
      return;
    }
    // A batch of answers: each goes to its own request.
    for (const msg of parsed.messages as Message[]) {
      const committed = onServerMessage(msg);
      if (committed !== undefined) commits.push(committed);
    }
  };

  const onServerMessage = (msg: Message): Promise<boolean> | undefined => {
    const at = performance.now();
    const routed = open.route(msg, at);
    if ('answered' in routed) {
      const req = routed.answered;
      const elapsed = at - req.t0;
      const timing = { ttfbMs: roundMs(req.firstEventMs ?? elapsed), durationMs: roundMs(elapsed) };
      return commit(req.decided, stdioAnswer(req.events, { offsetMs: elapsed, message: msg }, timing));
    }
    if ('orphan' in routed) {
      // A server message with no request open: a server-to-client stream of its own.
      const answer = stdioAnswer([{ offsetMs: 0, message: msg }], undefined, { durationMs: 0 });
      return commit(live(stdioCall(route, arrival(), undefined, { method: 'GET' })), answer);
    }
    return undefined;
  };

  const tooLong = (from: string, maxLineBytes: number): void =>
    void opts.stderr.write(`tapedeck mcp-stdio: ${lineTooLongMessage(from, maxLineBytes)}; relayed as is, not recorded\n`);
  const clientLines = new LineReader(opts.maxLineBytes);
  const serverLines = new LineReader(opts.maxLineBytes);
  opts.stdin.on('data', (chunk: Buffer) => {
    for (const item of clientLines.push(chunk)) {
      if (!('line' in item)) tooLong('the client', item.maxLineBytes);
      else if (item.line.trim() !== '') onClient(item.line);
    }
  });
  const relay = relayServer(child.stdout, opts.stdout, (chunk) => {
    const commits: Promise<boolean>[] = [];
    for (const item of serverLines.push(chunk)) {
      if (!('line' in item)) tooLong('the server', item.maxLineBytes);
      else if (item.line.trim() !== '') onServer(item.line, commits);
    }
    return commits;
  });
  relay.stopped.then(
    () => {
      opts.stderr.write(
        `tapedeck mcp-stdio: the tape cannot be written (${writer.failure?.message ?? 'write failed'}); the relay stops here (whenTapeFails: serve relays what is not recorded)\n`,
      );
      child.kill('SIGTERM');
    },
    () => undefined,
  );
  // Byte for byte; closing stdin closes the server's stdin (the MCP way to ask a stdio server to exit).
  opts.stdin.pipe(child.stdin);
  child.stdin.on('error', (err) => log.debug({ err: err.message }, 'server stdin closed'));
  // The client left: give the server a moment to exit on its own, then ask it to (as MCP clients do).
  opts.stdin.once('end', () => {
    const timer = setTimeout(() => child.kill('SIGTERM'), STOP_GRACE_MS);
    timer.unref();
  });

  const code = await exited;
  await new Promise<void>((r) => (child.stdout.readableEnded || child.stdout.destroyed ? r() : child.stdout.once('close', r)));
  await relay.done;
  opts.stdin.unpipe(child.stdin);
  for (const req of open.drain()) {
    const answer = stdioAnswer(req.events, undefined, { durationMs: roundMs(performance.now() - req.t0) });
    answer.error = { code: 'SERVER_EXITED', message: `the server exited (code ${code}) before answering`, phase: 'stream' };
    void commit(req.decided, answer);
  }
  await out.drain();
  return code;
}

/**
 * Relay the server's stdout to the client's, chunk by chunk in order, each once the records of the answers it carries
 * are committed (`read` says which, as it reads the chunk's lines), waiting for `drain`. `stopped` resolves when a
 * record could not be committed: nothing more is relayed (the client never gets an answer the tape does not have).
 */
function relayServer(
  from: Readable,
  to: Writable,
  read: (chunk: Buffer) => Promise<boolean>[],
): { done: Promise<void>; stopped: Promise<void> } {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let halted = false;
  let queue: Promise<void> = Promise.resolve();
  const writable = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const done = (): void => {
        to.off('drain', done);
        to.off('close', done);
        resolve();
      };
      to.on('drain', done);
      to.on('close', done);
    });
  from.on('data', (chunk: Buffer) => {
    const commits = read(chunk);
    // One chunk at a time, in order: the server is read on once this one is relayed (and the client took it).
    from.pause();
    queue = queue.then(async () => {
      if (halted) return;
      if (commits.length > 0 && !(await Promise.all(commits)).every(Boolean)) {
        halted = true;
        from.destroy();
        return stop();
      }
      if (!to.write(chunk)) await writable();
      from.resume();
    });
  });
  const ended = new Promise<void>((resolve) => from.once('close', resolve));
  return { done: ended.then(() => queue), stopped };
}
