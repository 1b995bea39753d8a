/** A change drift found, its severity, and the thresholds that decide between notable and noise. */
import { showPath, type ShapeChange } from './shape.js';

export type Severity = 'breaking' | 'notable' | 'noise';
export const SEVERITIES: readonly Severity[] = ['breaking', 'notable', 'noise'];

export interface Finding {
  severity: Severity;
  /** What was compared: status, shape, stream, tools, answer, model, cost, latency, error. */
  aspect: string;
  message: string;
}

export interface Thresholds {
  /** An answer less alike than this (0..1, word similarity) is notable. */
  minSimilarity: number;
  /** Cost (or tokens, without a price) beyond this ratio either way is notable. */
  costRatio: number;
  /** Time to first byte this many times the recording's, and at least `latencyFloorMs` more, is notable. */
  latencyRatio: number;
  latencyFloorMs: number;
}

export const DEFAULT_THRESHOLDS: Thresholds = { minSimilarity: 0.5, costRatio: 1.5, latencyRatio: 2, latencyFloorMs: 500 };

export type Add = (severity: Severity, aspect: string, message: string) => void;

/** A change of JSON shape as a finding (`where` names what holds it, e.g. `result of tools/call: `). */
export function shapeFinding(c: ShapeChange, add: Add, where = ''): void {
  const p = (x: string): string => `${where}${showPath(x)}`;
  switch (c.kind) {
    case 'removed':
      return add('breaking', 'shape', `field ${p(c.path)} (${c.types.join('|') || 'null'}) is gone`);
    case 'renamed':
      return add('breaking', 'shape', `field ${p(c.path)} is now ${p(c.to)} (renamed?)`);
    case 'type':
      return add('breaking', 'shape', `field ${p(c.path)} is ${c.to.join('|')}, was ${c.from.join('|')}`);
    case 'added':
      return add('notable', 'shape', `new field ${p(c.path)} (${c.types.join('|') || 'null'})`);
    case 'variant-removed':
      return add('notable', 'shape', `no ${p(c.path)} in the answer now`);
    case 'variant-added':
      return add('notable', 'shape', `the answer has ${p(c.path)} now`);
  }
}
