/**
 * Kurral's Agent Regression Score, beside tapedeck's own score:
 *
 *   ars           = 0.7 x outputSimilarity + 0.3 x toolAccuracy
 *   toolAccuracy  = max(0, used / original - min(0.5, 0.1 x new) - min(0.5, 0.1 x unused))
 *
 * over the distinct tool names: `original` the tools the original run called, `used` those the replay called too,
 * `new` the replay's tools the original never called, `unused` the original's tools the replay never called (base 1
 * when the original called none). Bands: excellent >= 0.9, good >= 0.7, moderate >= 0.5, else poor.
 */
import { round4 } from './similarity.js';
import type { ToolCallEntry } from './tool-sequence.js';

export type ArsBand = 'excellent' | 'good' | 'moderate' | 'poor';

export interface Ars {
  score: number;
  band: ArsBand;
  outputSimilarity: number;
  toolAccuracy: number;
  originalTools: number;
  usedTools: number;
  newTools: number;
  unusedTools: number;
}

export function ars(outputSimilarity: number, original: readonly ToolCallEntry[], replay: readonly ToolCallEntry[]): Ars {
  const a = new Set(original.map((t) => t.toolName));
  const b = new Set(replay.map((t) => t.toolName));
  const used = [...a].filter((t) => b.has(t)).length;
  const added = [...b].filter((t) => !a.has(t)).length;
  const unused = a.size - used;
  const base = a.size === 0 ? 1 : used / a.size;
  const toolAccuracy = round4(Math.max(0, base - Math.min(0.5, added * 0.1) - Math.min(0.5, unused * 0.1)));
  const score = round4(0.7 * outputSimilarity + 0.3 * toolAccuracy);
  return {
    score,
    band: arsBand(score),
    outputSimilarity,
    toolAccuracy,
    originalTools: a.size,
    usedTools: used,
    newTools: added,
    unusedTools: unused,
  };
}

export function arsBand(score: number): ArsBand {
  return score >= 0.9 ? 'excellent' : score >= 0.7 ? 'good' : score >= 0.5 ? 'moderate' : 'poor';
}
