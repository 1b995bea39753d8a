/**
 * Replay an MCP stdio server from a tape: read the client's newline-delimited JSON-RPC on stdin and answer on
 * stdout, without starting the server (unless a miss that goes live must forward a safe request). The client's end
 * is a `LineTransport` over stdin and stdout (writes wait for `drain`, lines have a limit), or any `McpTransport`
 * (the SDK's `InMemoryTransport` in tests), and the MCP engine decides each message. Messages are handled one at a
 * time in arrival order, so answers and their notifications keep the recorded order. A JSON-RPC batch is answered
 * with one line holding the array of answers (their notifications go out first, one per line).
 */
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../log.js';
import { createExchangeLog } from '../exchange-log.js';
import type { OnMiss } from '../types.js';
import type { Matcher } from '../../replay/matcher.js';
import type { SideEffectPolicy } from '../../replay/side-effects.js';
import { round } from '../../tape/sse.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import type { NewExchange, TapeWriter } from '../../tape/tape-writer.js';
import type { TapedeckError } from '../../errors.js';
import { rpcErrorMessage } from '../../providers/errors.js';
import type { Message } from '../../providers/mcp.js';
import { isRequestMessage } from '../../providers/mcp-batch.js';
import { batchAnswers, commit, decideAll, type Decision, type McpContext } from '../mcp/engine.js';
import type { McpTransport } from '../mcp/transport.js';
import { LineTransport } from './line-transport.js';
import type { LiveStdioServer } from './live.js';
import { acceptedAnswer, stdioAnswer, stdioCall, stdioIncoming, type StdioRoute } from './exchange.js';
import type { Arrival } from '../../engine/call.js';
import { exchangeRecord } from '../../engine/record.js';

export type StdioReplayOptions = StdioReplayBase & ({ stdin: Readable; stdout: Writable } | { transport: McpTransport });

interface StdioReplayBase {
  tape: LoadedTape;
  /** Route name of the server on the tape. */
  name: string;
  matcher: Matcher;
  policy: SideEffectPolicy;
  onMiss: OnMiss;
  out: TapeWriter;
  /** Where a line over the limit is reported (one line each); default: the log. */
  stderr?: Writable;
  log: Logger;
  /** Builds the real server for misses that go live; given the client's initialize request when it is first needed. */
  live?: (initialize: () => Message | undefined) => LiveStdioServer;
  /** The longest line read from the client, in bytes (default 10 MB, the MCP SDK's). */
  maxLineBytes?: number;
}

/** Serve until stdin ends; resolves 0 once every answer is written and the replay tape is complete. */
export async function replayStdio(opts: StdioReplayOptions): Promise<number> {
  const { out } = opts;
  const tapeLog = createExchangeLog(out, opts.log);
  let initialize: Message | undefined;
  let live: LiveStdioServer | undefined;
  const makeLive = opts.live;
  const upstream = opts.tape.exchanges.find((ex) => ex.route === opts.name)?.upstream;
  const client: McpTransport =
    'transport' in opts
      ? opts.transport
      : new LineTransport(opts.stdin, opts.stdout, {
          peer: 'the client',
          ...(opts.maxLineBytes !== undefined ? { maxLineBytes: opts.maxLineBytes } : {}),
        });
  const ctx: McpContext = {
    answer: { matcher: opts.matcher, policy: opts.policy, onMiss: opts.onMiss, tapeName: opts.tape.name, exchanges: opts.tape.exchanges },
    out: tapeLog,
    log: opts.log,
    incoming: (message) => stdioIncoming(opts.name, message),
    noLive: 'live forwarding could not reach the server: no server command to run live',
    ...(makeLive
      ? {
          live: async (message: Message) => {
            live ??= makeLive(() => initialize);
            return { messages: await live.request(message), recorded: false };
          },
        }
      : {}),
  };

  const route: StdioRoute = { name: opts.name, upstream };
  const arrival = (): Arrival => ({ startedAt: new Date(), offsetMs: out.now(), t0: performance.now() });

  /** The replay tape's record of what one message got. */
  const exchangeOf = (d: Decision, at: Arrival): NewExchange => {
    const call = stdioCall(route, at, d.message);
    if (d.kind === 'accepted') return exchangeRecord(call, acceptedAnswer(), { match: d.match });
    const answer = stdioAnswer(d.messages.slice(0, -1), d.messages.at(-1), { durationMs: round(d.at - at.t0) });
    return exchangeRecord(call, answer, { match: d.match });
  };

  /** A line that cannot be read as JSON-RPC (or was too long to read): a parse error, recorded with what it was. */
  const refuse = async (err: TapedeckError, text: string | undefined): Promise<void> => {
    const call = stdioCall(route, arrival(), undefined, { body: text === undefined ? { kind: 'empty' } : { kind: 'text', text } });
    const answer = rpcErrorMessage(err, null);
    await client.send(answer);
    tapeLog.write(
      exchangeRecord(call, stdioAnswer([], { offsetMs: 0, message: answer }, { durationMs: 0 }), {
        match: { kind: 'miss', reason: err.message },
      }),
    );
  };

  client.onmessage = async (value) => {
    const at = arrival();
    const batch = Array.isArray(value);
    const messages = batch ? value : [value];
    const init = messages.find((m) => m.method === 'initialize' && isRequestMessage(m));
    if (init !== undefined) initialize = init;
    const decisions = await decideAll(messages, ctx, async (d) => {
      commit(d, exchangeOf(d, at), ctx);
      // Notifications go out as they come; a lone message's answer follows them.
      for (const m of d.messages.slice(0, batch ? -1 : undefined)) await client.send(m.message);
    });
    const answers = batchAnswers(decisions);
    if (batch && answers.length > 0) await client.send(answers);
  };
  client.onerror = async (err, unread) => {
    if (err.code === 'LINE_TOO_LONG') {
      if (opts.stderr) opts.stderr.write(`${err.message}\n`);
      else opts.log.warn({ code: err.code }, err.message);
    } else if (unread === undefined) return void opts.log.error({ err: err.message }, 'mcp replay failed on a message');
    // A line that cannot be read is answered with a JSON-RPC error (a line over the limit too: its bytes were never kept).
    return refuse(err, unread?.text);
  };
  const closed = new Promise<void>((resolve) => (client.onclose = resolve));
  await client.start();
  await closed;
  live?.close();
  await tapeLog.drain();
  return 0;
}
