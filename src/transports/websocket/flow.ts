/**
 * Backpressure for one direction of a relayed session. A WebSocket peer that never reads would otherwise make
 * tapedeck hold everything the other side sends (hundreds of MB in seconds): each message taken from the source is
 * counted until it has left tapedeck (on the tape and handed to the other side's socket, or dropped), and while more
 * than {@link HIGH_WATER_BYTES} are held the source's socket is paused (`ws`'s `pause()`: nothing more is read, so
 * TCP pushes back on the sender), resumed once they are down to {@link LOW_WATER_BYTES}. HTTP bodies get the same
 * from stream pipes; a WebSocket message is whole, so the bound is crossed by at most one message.
 */
import type { WebSocket } from 'ws';

/** Bytes held for one direction above which its source is paused. */
export const HIGH_WATER_BYTES = 8 * 1024 * 1024;
/** Bytes held at or below which a paused source is resumed. */
export const LOW_WATER_BYTES = 2 * 1024 * 1024;

export interface Flow {
  /** A message of `bytes` was read from the source; call the returned function once it has left (idempotent). */
  take(bytes: number): () => void;
  /** The other side is gone: resume the source for good (its close must be read) and pause it no more. */
  end(): void;
  /** Bytes held now. */
  readonly held: number;
  /** Whether the source is paused now. */
  readonly paused: boolean;
}

export interface FlowOptions {
  highWater?: number;
  lowWater?: number;
  /** Told each time the source is paused or resumed (a debug log). */
  onChange?: (paused: boolean, held: number) => void;
}

export function createFlow(source: WebSocket, opts: FlowOptions = {}): Flow {
  const high = opts.highWater ?? HIGH_WATER_BYTES;
  const low = Math.min(opts.lowWater ?? LOW_WATER_BYTES, high);
  let held = 0;
  let paused = false;
  let ended = false;
  const set = (pause: boolean): void => {
    paused = pause;
    if (pause) source.pause();
    else source.resume();
    opts.onChange?.(pause, held);
  };
  return {
    take(bytes) {
      held += bytes;
      if (!paused && !ended && held > high) set(true);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        held -= bytes;
        if (paused && !ended && held <= low) set(false);
      };
    },
    end() {
      if (ended) return;
      ended = true;
      if (paused) set(false);
    },
    get held() {
      return held;
    },
    get paused() {
      return paused;
    },
  };
}
