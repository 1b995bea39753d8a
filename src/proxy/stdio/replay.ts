/**
 * Replay an MCP stdio server from a tape: read the client's newline-delimited JSON-RPC on stdin and answer on
 * stdout, without starting the server (unless a miss that goes live must forward a safe request). Messages are handled
 * one at a time in arrival order, so answers and their notifications keep the recorded order.
 */
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../log.js';
import { createExchangeLog } from '../exchange-log.js';
import type { OnMiss } from '../types.js';
import type { Matcher } from '../../replay/matcher.js';
import type { SideEffectPolicy } from '../../replay/side-effects.js';
import { round } from '../../tape/sse.js';
import type { MatchInfo } from '../../tape/schema.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import type { NewExchange, TapeWriter } from '../../tape/tape-writer.js';
import { answerMessage } from '../../replay/mcp-answer.js';
import { TapedeckError } from '../../errors.js';
import { rpcErrorMessage } from '../../providers/errors.js';
import { requestId, type Message } from '../../providers/mcp.js';
import { isRequestMessage, parseRpcBody } from '../../providers/mcp-batch.js';
import { LineSplitter } from './line-splitter.js';
import type { LiveStdioServer } from './live.js';
import { stdioEvent, stdioIncoming, stdioRequest } from './exchange.js';

export interface StdioReplayOptions {
  tape: LoadedTape;
  /** Route name of the server on the tape. */
  name: string;
  matcher: Matcher;
  policy: SideEffectPolicy;
  onMiss: OnMiss;
  out: TapeWriter;
  stdin: Readable;
  stdout: Writable;
  log: Logger;
  /** Builds the real server for misses that go live; given the client's initialize request when it is first needed. */
  live?: (initialize: () => Message | undefined) => LiveStdioServer;
}

/** Serve until stdin ends; resolves 0 once every answer is written and the replay tape is complete. */
export async function replayStdio(opts: StdioReplayOptions): Promise<number> {
  const { out, log } = opts;
  const tapeLog = createExchangeLog(out, log);
  let initialize: Message | undefined;
  let live: LiveStdioServer | undefined;
  const record = (ex: NewExchange): void => tapeLog.write(ex);
  const send = (m: unknown): void => void opts.stdout.write(JSON.stringify(m) + '\n');
  const upstream = opts.tape.exchanges.find((ex) => ex.route === opts.name)?.upstream;

  const handle = async (line: string): Promise<void> => {
    const startedAt = new Date();
    const offsetMs = round(out.now());
    const t0 = performance.now();
    const base = {
      startedAt: startedAt.toISOString(),
      offsetMs,
      transport: 'stdio' as const,
      route: opts.name,
      ...(upstream ? { upstream } : {}),
    };
    const parsed = parseRpcBody(line);
    if (!parsed.ok) {
      const err = rpcErrorMessage(parsed.error, null);
      send(err);
      record({
        ...base,
        request: { ...stdioRequest(undefined), body: { kind: 'text', text: line } },
        response: { status: 200, headers: {}, body: { kind: 'json', json: err } },
        timing: { durationMs: 0 },
        match: { kind: 'miss', reason: parsed.error.message },
      });
      return;
    }
    // Each message, alone or in a batch, gets the decision a single message gets. A batch is answered with one line
    // holding the array of answers (their notifications go out first, each on its own line).
    const answers: Message[] = [];
    for (const msg of parsed.messages as Message[]) {
      const answer = await decide(msg, base, t0);
      if (answer === undefined) continue;
      if (parsed.batch) answers.push(answer);
      else send(answer);
    }
    if (answers.length > 0) send(answers);
  };

  /** One client message: record what it got; send its notifications, and return its answer (none for a notification). */
  const decide = async (
    msg: Message,
    base: Pick<NewExchange, 'startedAt' | 'offsetMs' | 'transport' | 'route' | 'upstream'>,
    t0: number,
  ): Promise<Message | undefined> => {
    if (msg.method === 'initialize' && isRequestMessage(msg)) initialize = msg;
    const answer = await answerMessage(msg, () => stdioIncoming(opts.name, msg), {
      matcher: opts.matcher,
      policy: opts.policy,
      onMiss: opts.onMiss,
      tapeName: opts.tape.name,
      exchanges: opts.tape.exchanges,
    });
    if (answer.kind === 'accepted') {
      // Notifications and the client's answers to server requests need no reply.
      record({
        ...base,
        request: stdioRequest(msg),
        response: { status: 202, headers: {} },
        timing: { durationMs: 0 },
        match: answer.match,
      });
      return undefined;
    }
    let messages: { offsetMs: number; message: Message }[];
    let match: MatchInfo = answer.match;
    if (answer.kind === 'live') {
      try {
        live ??= opts.live?.(() => initialize);
        if (live === undefined) throw new TapedeckError('LIVE_UNAVAILABLE', 'no server command to run live');
        messages = await live.request(msg);
      } catch (err) {
        const reason = `live forwarding could not reach the server: ${(err as Error).message}`;
        const unavailable = new TapedeckError('LIVE_UNAVAILABLE', `tapedeck: ${reason}`, { cause: err });
        messages = [{ offsetMs: 0, message: rpcErrorMessage(unavailable, requestId(msg) ?? null) }];
        match = { kind: 'miss', reason };
      }
    } else {
      messages = answer.messages;
    }
    for (const m of messages.slice(0, -1)) send(m.message);
    const final = messages.at(-1);
    const events = messages.slice(0, -1).map((m) => stdioEvent(m.message, m.offsetMs));
    record({
      ...base,
      request: stdioRequest(msg),
      response: {
        status: 200,
        headers: {},
        ...(final ? { body: { kind: 'json', json: final.message } } : {}),
        ...(events.length > 0 ? { events } : {}),
      },
      timing: { durationMs: round(performance.now() - t0) },
      match,
      ...(answer.kind === 'answer' && answer.match.kind === 'blocked' ? { notes: { blocked: answer.match.reason } } : {}),
    });
    if (match.kind === 'blocked' || match.kind === 'miss')
      log.info({ method: msg.method, match: match.kind, reason: match.reason }, 'mcp replay');
    return final?.message;
  };

  const lines = new LineSplitter();
  let queue = Promise.resolve();
  opts.stdin.on('data', (chunk: Buffer) => {
    for (const line of lines.push(chunk)) {
      if (line.trim() === '') continue;
      queue = queue
        .then(() => handle(line))
        .catch((err: unknown) => log.error({ err: (err as Error).message }, 'mcp replay failed on a message'));
    }
  });
  await new Promise<void>((resolve) => {
    opts.stdin.once('end', resolve);
    opts.stdin.once('close', resolve);
  });
  const rest = lines.rest();
  if (rest.trim() !== '') queue = queue.then(() => handle(rest));
  await queue;
  live?.close();
  await tapeLog.drain();
  return 0;
}
