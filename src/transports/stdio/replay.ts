/**
 * Replay an MCP stdio server from a tape: read the client's newline-delimited JSON-RPC on stdin and answer on
 * stdout, without starting the server (unless a miss that goes live must forward a safe request). The client's end
 * is a `LineTransport` over stdin and stdout (writes wait for `drain`, lines have a limit), or any `McpTransport`
 * (the SDK's `InMemoryTransport` in tests), framed as stdio by `StdioReplayTransport`; the MCP replay server decides
 * each message (through the engine's settle: a fault rule may answer in a message's place) and its tee records it
 * before it is sent. Messages are handled one at a time in arrival order, so answers and their notifications keep the
 * recorded order. As every replay, it serves the upstream's answers only (`replay/servable.ts`): an answer a fault rule
 * injected while recording, or tapedeck's own, is on the tape as what the client got, never served as a recording.
 */
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../../log.js';
import type { FaultPlan } from '../../engine/settle.js';
import type { TapeFailurePolicy } from '../../engine/tape-failure.js';
import { createExchangeLog } from '../../engine/exchange-log.js';
import type { OnMiss, Timing } from '../../http/types.js';
import type { Matcher } from '../../replay/matcher.js';
import type { SideEffectPolicy } from '../../replay/side-effects.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import type { Exchange } from '../../tape/schema.js';
import { servableExchanges } from '../../replay/servable.js';
import type { TapeWriter } from '../../tape/stores/tape-writer.js';
import type { Message } from '../../providers/mcp.js';
import { McpReplayServer } from '../mcp/server.js';
import { indexClientReplies } from '../../replay/mcp-replies.js';
import type { McpTransport } from '../mcp/transport.js';
import { LineTransport } from './line-transport.js';
import type { LiveStdioServer } from './live.js';
import { StdioReplayTransport } from './replay-transport.js';

export type StdioReplayOptions = StdioReplayBase & ({ stdin: Readable; stdout: Writable } | { transport: McpTransport });

interface StdioReplayBase {
  tape: LoadedTape;
  /** Route name of the server on the tape. */
  name: string;
  /** The matcher over the answers replay serves (the tape's, less those not the upstream's: `replay/servable.ts`). */
  matcher: (served: readonly Exchange[]) => Matcher;
  policy: SideEffectPolicy;
  onMiss: OnMiss;
  out: TapeWriter;
  /** The pace of a recorded answer's messages (default instant: a macrotask apart). */
  timing?: Timing;
  /** Where a line over the limit is reported (one line each); default: the log. */
  stderr?: Writable;
  log: Logger;
  /** Builds the real server for misses that go live; given the client's initialize request when it is first needed. */
  live?: (initialize: () => Message | undefined) => LiveStdioServer;
  /** The longest line read from the client, in bytes (default 10 MB, the MCP SDK's). */
  maxLineBytes?: number;
  /** Faults injected into the run (`--faults`): tool errors and JSON-RPC errors instead of recorded answers. */
  faults?: FaultPlan;
  /** Once the replay tape cannot be written: refuse what could not be recorded (default) or serve it. */
  onTapeFailure?: TapeFailurePolicy;
}

/** Serve until stdin ends; resolves 0 once every answer is written and the replay tape is complete. */
export async function replayStdio(opts: StdioReplayOptions): Promise<number> {
  const tapeLog = createExchangeLog(opts.out, opts.log);
  const client: McpTransport =
    'transport' in opts
      ? opts.transport
      : new LineTransport(opts.stdin, opts.stdout, {
          peer: 'the client',
          ...(opts.maxLineBytes !== undefined ? { maxLineBytes: opts.maxLineBytes } : {}),
        });
  const transport = new StdioReplayTransport(client, {
    route: { name: opts.name, upstream: opts.tape.exchanges.find((ex) => ex.route === opts.name)?.upstream },
    out: tapeLog,
    log: opts.log,
    timing: opts.timing ?? { mode: 'instant' },
    stderr: opts.stderr,
    live: opts.live,
    onTapeFailure: opts.onTapeFailure,
  });
  // Only the upstream's answers are served; a rule of this run injects its fault again.
  const { served, unserved } = servableExchanges(opts.tape.exchanges);
  if (unserved.length > 0)
    opts.log.warn(
      { tape: opts.tape.name, count: unserved.length, first: unserved[0]?.why },
      "answers on the tape that are not the upstream's are not served",
    );
  const server = new McpReplayServer({
    answer: { matcher: opts.matcher(served), policy: opts.policy, onMiss: opts.onMiss, tapeName: opts.tape.name, exchanges: served },
    out: tapeLog,
    log: opts.log,
    faults: opts.faults,
    onTapeFailure: opts.onTapeFailure,
    replies: indexClientReplies(served),
  });
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await server.connect(transport);
  await closed;
  await server.drain();
  await transport.close();
  await tapeLog.drain();
  return 0;
}
