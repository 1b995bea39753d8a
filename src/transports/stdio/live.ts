/**
 * The real stdio server, started only when a miss that goes live must forward a safe request the tape cannot answer.
 * It is initialized with the client's own `initialize` request, then each forwarded request gets a private id so
 * its answer cannot be confused with anything the replay sends; the answer goes back with the client's id. Its
 * stdin and stdout are a `LineTransport`: writes wait for `drain`, and a line over the limit fails the requests
 * waiting for an answer (the answer was in it) instead of being held.
 */
import { spawn } from 'node:child_process';
import type { Logger } from '../../log.js';
import { TapedeckError } from '../../errors.js';
import type { Message, TimedMessage } from '../../providers/mcp.js';
import { LineTransport } from './line-transport.js';
import { OpenRequests, type OpenRequest } from './open-requests.js';

export interface LiveStdioServer {
  /** Forward one request; resolves with the notifications it caused and its answer (with the caller's id). */
  request(message: Message): Promise<TimedMessage[]>;
  close(): void;
}

interface Waiting extends OpenRequest {
  resolve: (answer: Message) => void;
  reject: (err: Error) => void;
}

export function createLiveStdioServer(opts: {
  command: string;
  args: readonly string[];
  initialize: () => Message | undefined;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** The longest line read from the server, in bytes (default 10 MB). */
  maxLineBytes?: number;
}): LiveStdioServer {
  let transport: LineTransport | undefined;
  let stop: (() => void) | undefined;
  let ready: Promise<void> | undefined;
  let next = 0;
  let exitError: Error | undefined;
  const waiting = new OpenRequests<Waiting>();

  const fail = (err: Error): void => {
    for (const w of waiting.drain()) w.reject(err);
  };
  const call = (m: Message): Promise<{ answer: Message; events: TimedMessage[] }> => {
    if (exitError) return Promise.reject(exitError);
    const id = `tapedeck-live-${next++}`;
    return new Promise((resolve, reject) => {
      const entry: Waiting = {
        message: m,
        t0: performance.now(),
        events: [],
        resolve: (answer) => resolve({ answer, events: entry.events }),
        reject,
      };
      waiting.add(id, entry);
      void transport?.send({ ...m, id });
    });
  };

  const start = (): Promise<void> => {
    const child = spawn(opts.command, [...opts.args], { stdio: ['pipe', 'pipe', 'inherit'], env: opts.env ?? process.env });
    const t = new LineTransport(child.stdout, child.stdin, {
      peer: 'the live server',
      ...(opts.maxLineBytes ? { maxLineBytes: opts.maxLineBytes } : {}),
    });
    transport = t;
    t.onmessage = (value) => {
      for (const msg of Array.isArray(value) ? value : [value]) {
        const routed = waiting.route(msg);
        if ('answered' in routed) routed.answered.resolve(msg);
      }
    };
    t.onerror = (err) => {
      opts.log.warn({ err: err.message }, 'the live server wrote a line that is not JSON-RPC');
      // The answer was in a line too long to read: what waits for it would wait forever.
      if (err.code === 'LINE_TOO_LONG') fail(err);
    };
    void t.start();
    const exited = (err: Error): void => {
      exitError = err;
      fail(err);
    };
    child.once('error', (err) =>
      exited(new TapedeckError('LIVE_UNAVAILABLE', `cannot start the live server: ${err.message}`, { cause: err })),
    );
    child.once('exit', (code) => exited(new TapedeckError('LIVE_UNAVAILABLE', `the live server exited (code ${code})`)));
    child.stdin.on('error', () => undefined);
    stop = () => {
      child.stdin.end();
      setTimeout(() => child.kill('SIGTERM'), 1000).unref();
    };
    const init = opts.initialize();
    if (init === undefined)
      return Promise.reject(new TapedeckError('LIVE_UNAVAILABLE', 'no initialize request to start the live server with'));
    return call(init).then(async ({ answer }) => {
      if ('error' in answer)
        throw new TapedeckError('LIVE_UNAVAILABLE', `the live server refused initialize: ${JSON.stringify(answer.error)}`);
      await t.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
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
      stop?.();
    },
  };
}
