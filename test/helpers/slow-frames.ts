/**
 * A tape writer whose WebSocket frames take 30 ms to be on the tape, and the time each server message was: for tests
 * of the ordering rule (a server message reaches the client only once it is on the tape). Server text messages are
 * JSON `{ n }`, as the tests' counting upstreams send them.
 */
import type { TapeStore, TapeWriter } from '../../src/tape/store.js';

/** `real`, with its session frames 30 ms late; `written` gets each server message's `n` and when it was written. */
export function slowFrameWriter(real: TapeWriter, written: Map<number, number>): TapeWriter {
  return {
    ...real,
    path: real.path,
    name: real.name,
    header: real.header,
    get count() {
      return real.count;
    },
    get failure() {
      return real.failure;
    },
    now: () => real.now(),
    append: (ex) => real.append(ex),
    close: () => real.close(),
    async begin(ex) {
      const open = await real.begin!(ex);
      return {
        exchange: open.exchange,
        end: (f) => open.end(f),
        async addFrames(frames) {
          await open.addFrames(frames);
          await new Promise((r) => setTimeout(r, 30));
          for (const f of frames)
            if (f.from === 'server' && f.kind === 'text') written.set((f.data as { json: { n: number } }).json.n, performance.now());
        },
      };
    },
  };
}

/** `store`, whose writers are `slowFrameWriter`s. */
export function slowFrameStore(store: TapeStore, written: Map<number, number>): TapeStore {
  return { ...store, openWriter: async (o) => slowFrameWriter(await store.openWriter(o), written) };
}
