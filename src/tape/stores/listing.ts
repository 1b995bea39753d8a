/** `list` for stores that read their tapes one by one (a folder, memory): the filters and the paging, in one place. */
import type { TapeListEntry, TapePage, TapeQuery } from '../store.js';

/** Whether an entry passes the query's filters (an unreadable tape passes only filters it cannot fail: the prefix). */
export function passes(entry: TapeListEntry, q: TapeQuery): boolean {
  if (q.prefix !== undefined && !entry.name.startsWith(q.prefix)) return false;
  if (!entry.ok) return q.mode === undefined && q.model === undefined && q.tool === undefined && q.since === undefined;
  if (q.mode !== undefined && entry.header.mode !== q.mode) return false;
  if (q.model !== undefined && !entry.stats.models.includes(q.model)) return false;
  if (q.tool !== undefined && !entry.stats.tools.includes(q.tool)) return false;
  if (q.since !== undefined && !(Date.parse(entry.header.createdAt) >= q.since.getTime())) return false;
  return true;
}

/** Names (sorted) after `q.after`, filtered, cut to `q.limit`; `entryOf` is asked only for names that may be shown. */
export async function listByScanning(
  names: readonly string[],
  q: TapeQuery,
  entryOf: (name: string) => Promise<TapeListEntry | undefined>,
): Promise<TapePage> {
  const limit = q.limit ?? Infinity;
  const tapes: TapeListEntry[] = [];
  for (const name of names) {
    if (q.after !== undefined && name <= q.after) continue;
    if (q.prefix !== undefined && !name.startsWith(q.prefix)) continue;
    const entry = await entryOf(name);
    if (entry === undefined || !passes(entry, q)) continue;
    if (tapes.length === limit) return { tapes, next: (tapes[tapes.length - 1] as TapeListEntry).name };
    tapes.push(entry);
  }
  return { tapes };
}
