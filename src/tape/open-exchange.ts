/**
 * `TapeWriter.begin` over any store: the session's exchange record first (through the writer's own `append`), then
 * its messages gathered per event-loop turn into one `frames` record each, then its `end` record, all in call order.
 * A store provides how a record that is not an exchange is queued (its group commit, not counted as an exchange) and
 * how the tape is marked as holding sessions (format 2).
 *
 * Records, as stored (one JSON line each in a folder store):
 *   {"type":"exchange","id":"000007",...,"transport":"websocket","response":{"status":101,...},"websocket":{"frames":[]},...}
 *   {"type":"frames","exchange":"000007","frames":[{"from":"server","offsetMs":12.5,"kind":"text","data":{"kind":"json","json":{...}}}]}
 *   {"type":"end","exchange":"000007","durationMs":5312.1,"error":{...}?,"match":{...}?,"notes":{...}?}
 */
import { TapedeckError } from '../errors.js';
import type { ExchangeEncoder } from './exchange-encoder.js';
import type { WsFrame } from './schema.js';
import type { NewExchange, OpenExchange, TapeWriter } from './store.js';

export interface OpenExchangeStore {
  tape: string;
  encoder: Pick<ExchangeEncoder, 'encodeFrames'>;
  /** Queue one record that is not an exchange (a `frames` or `end` line); resolves once it is durable. */
  enqueue(line: string): Promise<void>;
  /** The tape's write failure, if it has failed. */
  failure(): TapedeckError | undefined;
  /** Report a failure to store (large messages) as the tape's failure. */
  fail(err: unknown): TapedeckError;
  /** Mark the tape as one that holds sessions (format 2), before its first session's record. */
  markSessions(): void;
}

/** `begin` for a writer: append the exchange through `append`, then hand out its `OpenExchange`. */
export async function beginExchange(store: OpenExchangeStore, append: TapeWriter['append'], input: NewExchange): Promise<OpenExchange> {
  const failed = store.failure();
  if (failed !== undefined) throw failed;
  store.markSessions();
  const first = input.websocket?.frames ?? [];
  const exchange = await append({ ...input, websocket: { frames: [] } });
  const open = openExchange(store, exchange);
  if (first.length > 0) open.addFrames(first).catch(() => undefined);
  return open;
}

function openExchange(store: OpenExchangeStore, exchange: OpenExchange['exchange']): OpenExchange {
  const id = exchange.id;
  // Messages of this turn wait here; `line` is the promise of the record that will carry them.
  let gathered: WsFrame[] = [];
  let line: Promise<void> | undefined;
  // Each call's messages are encoded in call order (a large one is stored apart first).
  let tail: Promise<unknown> = Promise.resolve();
  let ended = false;
  const gather = (frames: readonly WsFrame[]): Promise<void> => {
    for (const f of frames) gathered.push(f);
    line ??= new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        const taken = gathered;
        gathered = [];
        line = undefined;
        store.enqueue(JSON.stringify({ type: 'frames', exchange: id, frames: taken })).then(resolve, reject);
      }),
    );
    return line;
  };
  return {
    exchange,
    addFrames(frames) {
      if (ended) return Promise.reject(new TapedeckError('TAPE_CLOSED', `session ${id} on tape "${store.tape}" has ended`));
      const failed = store.failure();
      if (failed !== undefined) return Promise.reject(failed);
      // The chain waits for the messages to be gathered, not stored: those of one turn share a record.
      const queued = tail.then(async () => {
        let ready: WsFrame[];
        try {
          ready = await store.encoder.encodeFrames(frames);
        } catch (err) {
          throw err instanceof TapedeckError && err.code !== 'TAPE_WRITE_FAILED' ? err : store.fail(err);
        }
        return { stored: gather(ready) };
      });
      tail = queued.catch(() => undefined);
      return queued.then((q) => q.stored);
    },
    end(final) {
      if (ended) return Promise.resolve();
      ended = true;
      // After the last `frames` record is queued (the end goes after it, in the same commit or a later one).
      const done = tail.then(async () => {
        const pending = line;
        await new Promise<void>((r) => setImmediate(r));
        await Promise.all([pending, store.enqueue(JSON.stringify({ type: 'end', exchange: id, ...final }))]);
      });
      tail = done.catch(() => undefined);
      return done;
    },
  };
}
