/**
 * The real stdio server, started only when a miss that goes live must forward a safe request the tape cannot answer.
 * It is initialized with the client's own `initialize` request, then each forwarded request gets a private id so
 * its answer cannot be confused with anything the replay sends; the answer goes back with the client's id.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Logger } from '../../log.js';
import { TapedeckError } from '../../errors.js';
import { parseRpc, rpcKind, type RequestId } from '../../providers/mcp.js';
import { LineSplitter } from './line-splitter.js';

type Message = Record<string, unknown>;

export interface LiveStdioServer {
  /** Forward one request; resolves with the notifications it caused and its answer (with the caller's id). */
  request(message: Message): Promise<{ offsetMs: number; message: Message }[]>;
  close(): void;
}

export function createLiveStdioServer(opts: {
  command: string;
  args: readonly string[];
  initialize: () => Message | undefined;
  log: Logger;
  env?: NodeJS.ProcessEnv;
}): LiveStdioServer {
  let child: ChildProcessWithoutNullStreams | undefined;
  let ready: Promise<void> | undefined;
  let next = 0;
  let exitError: Error | undefined;
  const waiting = new Map<
    RequestId,
    { resolve: (m: Message) => void; reject: (e: Error) => void; events: { offsetMs: number; message: Message }[]; t0: number }
  >();

  const send = (m: Message): void => void child?.stdin.write(JSON.stringify(m) + '\n');
  const call = (m: Message): Promise<{ answer: Message; events: { offsetMs: number; message: Message }[] }> => {
    if (exitError) return Promise.reject(exitError);
    const id = `tapedeck-live-${next++}`;
    return new Promise((resolve, reject) => {
      const entry = {
        resolve: (answer: Message) => resolve({ answer, events: entry.events }),
        reject,
        events: [] as { offsetMs: number; message: Message }[],
        t0: performance.now(),
      };
      waiting.set(id, entry);
      send({ ...m, id });
    });
  };

  const start = (): Promise<void> => {
    const c = spawn(opts.command, [...opts.args], { stdio: ['pipe', 'pipe', 'inherit'], env: opts.env ?? process.env });
    child = c as unknown as ChildProcessWithoutNullStreams;
    const lines = new LineSplitter();
    c.stdout.on('data', (chunk: Buffer) => {
      for (const line of lines.push(chunk)) {
        const parsed = parseRpc(line);
        if (!parsed.ok) continue;
        const msg = parsed.message as Message;
        const w = rpcKind(parsed.message) === 'response' ? waiting.get(msg.id as RequestId) : undefined;
        if (w) {
          waiting.delete(msg.id as RequestId);
          w.resolve(msg);
        } else {
          const last = [...waiting.values()].at(-1);
          last?.events.push({ offsetMs: performance.now() - last.t0, message: msg });
        }
      }
    });
    const fail = (err: Error): void => {
      exitError = err;
      for (const w of waiting.values()) w.reject(err);
      waiting.clear();
    };
    c.once('error', (err) => fail(new TapedeckError('LIVE_UNAVAILABLE', `cannot start the live server: ${err.message}`, { cause: err })));
    c.once('exit', (code) => fail(new TapedeckError('LIVE_UNAVAILABLE', `the live server exited (code ${code})`)));
    c.stdin.on('error', () => undefined);
    const init = opts.initialize();
    if (init === undefined)
      return Promise.reject(new TapedeckError('LIVE_UNAVAILABLE', 'no initialize request to start the live server with'));
    return call(init).then(({ answer }) => {
      if ('error' in answer)
        throw new TapedeckError('LIVE_UNAVAILABLE', `the live server refused initialize: ${JSON.stringify(answer.error)}`);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      opts.log.info({ command: opts.command }, 'live server started to forward a miss');
    });
  };

  return {
    async request(message) {
      ready ??= start();
      await ready;
      const { answer, events } = await call(message);
      return [...events, { offsetMs: events.at(-1)?.offsetMs ?? 0, message: { ...answer, id: message.id } }];
    },
    close() {
      child?.stdin.end();
      const c = child;
      if (c) setTimeout(() => c.kill('SIGTERM'), 1000).unref();
    },
  };
}
