/** Loading a tape for inspection: the tape, its steps in timeline order, and what could not be read. */
import { loadTape, type LoadedTape } from '../tape/tape-reader.js';
import { toSteps, type Step } from './steps.js';

export interface InspectedTape {
  tape: LoadedTape;
  steps: Step[];
}

/** Load a tape by name from `dir` and lay it out as steps (views over its exchanges and their recorded meaning). */
export async function inspectTape(dir: string, name: string): Promise<InspectedTape> {
  const tape = await loadTape(dir, name);
  return { tape, steps: toSteps(tape.exchanges) };
}
