/**
 * Record an MCP stdio server: spawn it, relay stdin/stdout byte for byte (stderr passes through as logging; `pipe`
 * waits for `drain` both ways), and write each client message with what the server sent for it as an exchange (see
 * `exchange.ts`). The lines are read beside the relay, with the line limit: an over-long line is still relayed (the
 * server judges it) but not recorded, and one line on stderr says so.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../log.js';
import { createExchangeLog } from '../../engine/exchange-log.js';
import { roundMs } from '../../tape/timing.js';
import type { NewExchange, TapeWriter } from '../../tape/stores/tape-writer.js';
import type { Arrival } from '../../engine/call.js';
import { exchangeRecord } from '../../engine/record.js';
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
}

/** How long a server may take to exit after its stdin closed before it gets SIGTERM. */
const STOP_GRACE_MS = 2000;

interface Open extends OpenRequest {
  /** When the request came, on the tape's timeline. */
  at: Arrival;
  notes?: Record<string, unknown>;
}

/** Runs until the server exits (or the client closes stdin and the server then exits); resolves with the server's exit code. */
export async function recordStdio(opts: StdioRecordOptions): Promise<number> {
  const { writer, log } = opts;
  const upstream = [opts.command, ...opts.args].join(' ');
  const open = new OpenRequests<Open>();
  const out = createExchangeLog(writer, log);
  const write = (ex: NewExchange): void => out.write(ex);
  const route: StdioRoute = { name: opts.name, upstream };
  const arrival = (): Arrival => ({ startedAt: new Date(), offsetMs: writer.now(), t0: performance.now() });

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
      write(exchangeRecord(stdioCall(route, at, undefined, { body: { kind: 'text', text: line } }), acceptedAnswer()));
      return;
    }
    // A batch is recorded message by message, each as if it had been sent alone (see providers/mcp-batch.ts).
    for (const [index, msg] of (parsed.messages as Message[]).entries()) {
      const notes = parsed.batch ? { batch: { index, size: parsed.messages.length } } : undefined;
      if (isRequestMessage(msg)) {
        open.add(msg.id as RequestId, { message: msg, at, t0: performance.now(), events: [], ...(notes ? { notes } : {}) });
        continue;
      }
      write(exchangeRecord(stdioCall(route, at, msg), acceptedAnswer(), { notes }));
    }
  };

  const onServer = (line: string): void => {
    const parsed = parseRpcBody(line);
    if (!parsed.ok) {
      log.warn({ line: line.slice(0, 200) }, 'server wrote a line that is not JSON-RPC');
      return;
    }
    // A batch of answers: each goes to its own request.
    for (const msg of parsed.messages as Message[]) onServerMessage(msg);
  };

  const onServerMessage = (msg: Message): void => {
    const at = performance.now();
    const routed = open.route(msg, at);
    if ('answered' in routed) {
      const req = routed.answered;
      const elapsed = at - req.t0;
      const timing = { ttfbMs: roundMs(req.firstEventMs ?? elapsed), durationMs: roundMs(elapsed) };
      const answer = stdioAnswer(req.events, { offsetMs: elapsed, message: msg }, timing);
      write(exchangeRecord(stdioCall(route, req.at, req.message), answer, { notes: req.notes }));
    } else if ('orphan' in routed) {
      // A server message with no request open: a server-to-client stream of its own.
      const answer = stdioAnswer([{ offsetMs: 0, message: msg }], undefined, { durationMs: 0 });
      write(exchangeRecord(stdioCall(route, arrival(), undefined, { method: 'GET' }), answer));
    }
  };

  const tooLong = (from: string, maxLineBytes: number): void =>
    void opts.stderr.write(`tapedeck mcp-stdio: ${lineTooLongMessage(from, maxLineBytes)}; relayed as is, not recorded\n`);
  const read = (reader: LineReader, from: string, onLine: (line: string) => void) => (chunk: Buffer) => {
    for (const item of reader.push(chunk)) {
      if (!('line' in item)) tooLong(from, item.maxLineBytes);
      else if (item.line.trim() !== '') onLine(item.line);
    }
  };
  const clientLines = new LineReader(opts.maxLineBytes);
  const serverLines = new LineReader(opts.maxLineBytes);
  opts.stdin.on('data', read(clientLines, 'the client', onClient));
  child.stdout.on('data', read(serverLines, 'the server', onServer));
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
  for (const req of open.drain()) {
    const answer = stdioAnswer(req.events, undefined, { durationMs: roundMs(performance.now() - req.t0) });
    answer.error = { code: 'SERVER_EXITED', message: `the server exited (code ${code}) before answering`, phase: 'stream' };
    write(exchangeRecord(stdioCall(route, req.at, req.message), answer, { notes: req.notes }));
  }
  await out.drain();
  return code;
}
