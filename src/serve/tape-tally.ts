/**
 * What a tape did, counted as its exchanges reach it: a store that hands out writers which tally each stored exchange
 * by how it was answered (recorded; replayed from the tape; missed or blocked; forwarded live), and that sends replay
 * tapes where the server keeps them (beside their tapes, or a scratch store that forgets them).
 */
import type { Exchange } from '../tape/schema.js';
import type { TapeStore, TapeWriter, WriterOptions } from '../tape/store.js';

export interface TapeTally {
  recorded: number;
  replayed: number;
  missed: number;
  live: number;
}

export function tally(counts: TapeTally, ex: Pick<Exchange, 'match'>): void {
  const kind = ex.match?.kind;
  if (kind === undefined) counts.recorded++;
  else if (kind === 'miss' || kind === 'blocked') counts.missed++;
  else if (kind === 'live') counts.live++;
  else counts.replayed++;
}

/** What else sees each stored exchange (the recordings a replay's answers came from, for `--expect`). */
export type OnStored = (ex: Exchange) => void;

/** A writer that tallies every exchange it stores (an open WebSocket session counts when it starts). */
export function tallyingWriter(writer: TapeWriter, counts: TapeTally, onStored?: OnStored): TapeWriter {
  return {
    get path() {
      return writer.path;
    },
    get name() {
      return writer.name;
    },
    get header() {
      return writer.header;
    },
    get count() {
      return writer.count;
    },
    get failure() {
      return writer.failure;
    },
    now: () => writer.now(),
    append: async (ex) => {
      const stored = await writer.append(ex);
      tally(counts, stored);
      onStored?.(stored);
      return stored;
    },
    begin: async (ex) => {
      const open = await writer.begin(ex);
      tally(counts, open.exchange);
      onStored?.(open.exchange);
      return open;
    },
    eventLines: (events) => writer.eventLines(events),
    close: () => writer.close(),
  };
}

/** `store`, but its writers tally into `counts` (and tell `onStored`), and replay tapes are written to `replays`. */
export function tallyingStore(store: TapeStore, replays: TapeStore, counts: TapeTally, onStored?: OnStored): TapeStore {
  const openWriter = async (opts: WriterOptions): Promise<TapeWriter> =>
    tallyingWriter(await (opts.header.mode === 'replay' ? replays : store).openWriter(opts), counts, onStored);
  return new Proxy(store, {
    get(target, key) {
      if (key === 'openWriter') return openWriter;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
