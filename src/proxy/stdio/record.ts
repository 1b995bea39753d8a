/**
 * Record an MCP stdio server: spawn it, relay stdin/stdout byte for byte (stderr passes through as logging), and
 * write each client message with what the server sent for it as an exchange (see `exchange.ts`).
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../log.js';
import { createExchangeLog } from '../exchange-log.js';
import { round } from '../../tape/sse.js';
import type { SseEvent } from '../../tape/schema.js';
import type { NewExchange, TapeWriter } from '../../tape/tape-writer.js';
import { progressToken, type RequestId } from '../../providers/mcp.js';
import { isRequestMessage, parseRpcBody } from '../../providers/mcp-batch.js';
import { LineSplitter } from './line-splitter.js';
import { stdioEvent, stdioRequest } from './exchange.js';

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
}

/** How long a server may take to exit after its stdin closed before it gets SIGTERM. */
const STOP_GRACE_MS = 2000;

interface Open {
  message: unknown;
  startedAt: Date;
  offsetMs: number;
  t0: number;
  progressToken: RequestId | undefined;
  events: SseEvent[];
  ttfbMs?: number;
  notes?: Record<string, unknown>;
}

/** Runs until the server exits (or the client closes stdin and the server then exits); resolves with the server's exit code. */
export async function recordStdio(opts: StdioRecordOptions): Promise<number> {
  const { writer, log } = opts;
  const upstream = [opts.command, ...opts.args].join(' ');
  const open = new Map<RequestId, Open>();
  const out = createExchangeLog(writer, log);
  const write = (ex: NewExchange): void => out.write(ex);
  const base = (startedAt: Date, offsetMs: number): Pick<NewExchange, 'startedAt' | 'offsetMs' | 'transport' | 'route' | 'upstream'> => ({
    startedAt: startedAt.toISOString(),
    offsetMs: round(offsetMs),
    transport: 'stdio',
    route: opts.name,
    upstream,
  });

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
    const now = new Date();
    const offsetMs = writer.now();
    if (!parsed.ok) {
      // Not ours to judge in record mode: the server sees it and answers; we record what it was.
      write({
        ...base(now, offsetMs),
        request: { ...stdioRequest(undefined), body: { kind: 'text', text: line } },
        response: { status: 202, headers: {} },
        timing: { durationMs: 0 },
      });
      return;
    }
    // A batch is recorded message by message, each as if it had been sent alone (see providers/mcp-batch.ts).
    for (const [index, msg] of (parsed.messages as Record<string, unknown>[]).entries()) {
      const notes = parsed.batch ? { notes: { batch: { index, size: parsed.messages.length } } } : {};
      if (isRequestMessage(msg)) {
        open.set(msg.id as RequestId, {
          message: msg,
          startedAt: now,
          offsetMs,
          t0: performance.now(),
          progressToken: progressToken(msg),
          events: [],
          ...notes,
        });
        continue;
      }
      write({
        ...base(now, offsetMs),
        request: stdioRequest(msg),
        response: { status: 202, headers: {} },
        timing: { durationMs: 0 },
        ...notes,
      });
    }
  };

  const onServer = (line: string): void => {
    const parsed = parseRpcBody(line);
    if (!parsed.ok) {
      log.warn({ line: line.slice(0, 200) }, 'server wrote a line that is not JSON-RPC');
      return;
    }
    // A batch of answers: each goes to its own request.
    for (const msg of parsed.messages as Record<string, unknown>[]) onServerMessage(msg);
  };

  const onServerMessage = (msg: Record<string, unknown>): void => {
    const at = performance.now();
    if (msg.method === undefined && open.has(msg.id as RequestId)) {
      const req = open.get(msg.id as RequestId) as Open;
      open.delete(msg.id as RequestId);
      const elapsed = at - req.t0;
      write({
        ...base(req.startedAt, req.offsetMs),
        request: stdioRequest(req.message),
        response: { status: 200, headers: {}, body: { kind: 'json', json: msg }, ...(req.events.length > 0 ? { events: req.events } : {}) },
        timing: { ttfbMs: round(req.ttfbMs ?? elapsed), durationMs: round(elapsed) },
        ...(req.notes ? { notes: req.notes } : {}),
      });
      return;
    }
    // A notification or server request: tie it to the request it reports progress for, else to the latest open one.
    const token = (msg.params as { progressToken?: RequestId } | undefined)?.progressToken;
    const owner = [...open.values()].find((o) => token !== undefined && o.progressToken === token) ?? [...open.values()].at(-1);
    if (owner) {
      owner.ttfbMs ??= at - owner.t0;
      owner.events.push(stdioEvent(msg, at - owner.t0));
      return;
    }
    write({
      ...base(new Date(), writer.now()),
      request: stdioRequest(undefined, 'GET'),
      response: { status: 200, headers: {}, events: [stdioEvent(msg, 0)] },
      timing: { durationMs: 0 },
    });
  };

  const clientLines = new LineSplitter();
  const serverLines = new LineSplitter();
  opts.stdin.on('data', (chunk: Buffer) => {
    for (const line of clientLines.push(chunk)) if (line.trim() !== '') onClient(line);
  });
  child.stdout.on('data', (chunk: Buffer) => {
    for (const line of serverLines.push(chunk)) if (line.trim() !== '') onServer(line);
  });
  // Byte for byte both ways; closing stdin closes the server's stdin (the MCP way to ask a stdio server to exit).
  opts.stdin.pipe(child.stdin);
  child.stdout.pipe(opts.stdout, { end: false });
  child.stdin.on('error', (err) => log.debug({ err: err.message }, 'server stdin closed'));
  // The client left: give the server a moment to exit on its own, then ask it to (as MCP clients do).
  opts.stdin.once('end', () => {
    const timer = setTimeout(() => child.kill('SIGTERM'), STOP_GRACE_MS);
    timer.unref();
  });

  const code = await exited;
  await new Promise<void>((r) => (child.stdout.readableEnded || child.stdout.destroyed ? r() : child.stdout.once('close', r)));
  opts.stdin.unpipe(child.stdin);
  for (const req of open.values()) {
    write({
      ...base(req.startedAt, req.offsetMs),
      request: stdioRequest(req.message),
      response: { status: 200, headers: {}, ...(req.events.length > 0 ? { events: req.events } : {}) },
      error: { code: 'SERVER_EXITED', message: `the server exited (code ${code}) before answering`, phase: 'stream' },
      timing: { durationMs: round(performance.now() - req.t0) },
      ...(req.notes ? { notes: req.notes } : {}),
    });
  }
  open.clear();
  await out.drain();
  return code;
}
