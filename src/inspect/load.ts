/** Loading a tape for inspection: the tape, its steps in timeline order, and what could not be read. */
import { describeLlm } from '../providers/index.js';
import type { Exchange } from '../tape/schema.js';
import { loadTape, type LoadedTape } from '../tape/tape-reader.js';
import { toSteps, type Step } from './steps.js';

export interface InspectedTape {
  tape: LoadedTape;
  steps: Step[];
}

/** Load a tape by name from `dir` and lay it out as steps. */
export async function inspectTape(dir: string, name: string): Promise<InspectedTape> {
  const tape = await loadTape(dir, name);
  tape.exchanges = withMeaning(tape.exchanges);
  return { tape, steps: toSteps(tape.exchanges) };
}

/**
 * Exchanges with their LLM meaning: the recorded one, or, for a tape recorded before its provider was known
 * (no `llm` field), what the provider adapters read from it now. A describer that fails leaves the exchange as is.
 */
export function withMeaning(exchanges: Exchange[]): Exchange[] {
  return exchanges.map((ex) => {
    if (ex.llm !== undefined || ex.mcp !== undefined) return ex;
    try {
      const llm = describeLlm(ex);
      return llm === undefined ? ex : { ...ex, llm };
    } catch {
      return ex;
    }
  });
}
