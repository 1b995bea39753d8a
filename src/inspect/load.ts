/** Loading a tape for inspection: the tape, its steps in timeline order, and what could not be read. */
import type { LoadedTape, TapeStore } from '../tape/store.js';
import { toSteps, type Step } from './steps.js';

export interface InspectedTape {
  tape: LoadedTape;
  steps: Step[];
}

/** Load a tape from a store and lay it out as steps (views over its exchanges and their recorded meaning). */
export async function inspectTape(store: TapeStore, name: string): Promise<InspectedTape> {
  const tape = await store.load(name);
  return { tape, steps: toSteps(tape.exchanges) };
}
