/**
 * What one in-memory store holds: its tapes (as the JSON lines a folder store would write), its large bodies by
 * hash, its followers, and the version counter. Kept in one context object per store, so the store's reading and
 * writing functions (`memory-store.ts`, `memory-writer.ts`) share it without a module-level variable.
 */
import { validateTapeName } from '../paths.js';
import type { TapeHeader } from '../schema.js';
import type { TapeRecord } from '../tape-reader.js';
import { tapeNotFound } from './resolve.js';

export const MEMORY_LOCATION = 'memory';

export interface MemoryTape {
  header: TapeHeader;
  /** The header's JSON, then one JSON record per exchange. */
  records: string[];
  modifiedAt: Date;
  version: number;
  writing: boolean;
}

export interface MemoryContext {
  tapes: Map<string, MemoryTape>;
  blobs: Map<string, Buffer>;
  watchers: Map<string, Set<() => void>>;
  /** One counter for the store: a tape deleted and written again never repeats a version. */
  versions: number;
}

export function memoryContext(): MemoryContext {
  return { tapes: new Map(), blobs: new Map(), watchers: new Map(), versions: 0 };
}

/** The store's next version, for a tape just written. */
export function nextVersion(ctx: MemoryContext): number {
  return ++ctx.versions;
}

/** Tell the tape's followers it changed (each on a microtask of its own, as a commit's notice would come). */
export function changed(ctx: MemoryContext, name: string): void {
  for (const fn of ctx.watchers.get(name) ?? []) queueMicrotask(fn);
}

export function getTape(ctx: MemoryContext, name: string): MemoryTape {
  const t = ctx.tapes.get(validateTapeName(name));
  if (t === undefined) throw tapeNotFound(name, MEMORY_LOCATION, [...ctx.tapes.keys()].sort());
  return t;
}

export function memoryWhere(name: string): string {
  return `${MEMORY_LOCATION}#${name}`;
}

/** The tape's records numbered as a folder store numbers its lines. */
export function numbered(tape: MemoryTape): TapeRecord[] {
  return tape.records.map((text, i) => ({ line: i + 1, text }));
}
