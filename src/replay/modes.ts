/** How a replay run behaves: what a miss does, how fast recorded streams are sent, where LLM answers come from. */

/** A request the tape cannot answer: a loud error (`strict`), the same error marked lenient, or forwarded (`live`). */
export type OnMiss = 'strict' | 'lenient' | 'live';

/** Recorded gaps between stream events: none (`instant`), as recorded, or scaled by a factor. */
export type Timing = { mode: 'instant' } | { mode: 'recorded' } | { mode: 'scaled'; factor: number };

/** Where a replay's LLM answers come from: the tape, or the real upstream (a modified replay). */
export type LlmMode = 'tape' | 'live';

/** Milliseconds to wait for a recorded gap under a timing mode. */
export function scaledDelay(gapMs: number, timing: Timing): number {
  if (timing.mode === 'instant' || gapMs <= 0) return 0;
  return timing.mode === 'recorded' ? gapMs : gapMs * timing.factor;
}
