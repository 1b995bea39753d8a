/**
 * What the store reads from its own tables, checked as strictly as what it writes: anyone with access to the
 * database can write a row, and a row is input like a tape line. A tape's name must be one tapedeck would write
 * (so no name with control characters reaches a terminal or a file path), and its running totals must have the
 * shape `stats.ts` gives them (so a listing never crashes on one bad row: that row is reported, against itself).
 */
import { z } from 'zod';
import { MAX_TAPE_NAME, validateTapeName } from '../../paths.js';
import { MatchKindSchema, type MatchKind } from '../../schema.js';
import type { TapeStats } from '../../stats.js';

const count = z.number().int().nonnegative();
const names = z.array(z.string());

const ModelUsageSchema = z.object({ calls: count, inputTokens: count, outputTokens: count, cachedInputTokens: count });

/** A tape row's `stats` column: the running totals as `stats.ts` keeps them. */
export const TapeStatsSchema = z.object({
  exchanges: count,
  sessions: count.optional(),
  llmCalls: count,
  mcpToolCalls: count,
  modelToolCalls: count,
  errors: count,
  tokens: z.object({ input: count, output: count, total: count }),
  usage: z.record(z.string(), ModelUsageSchema),
  startMs: z.number().nullable(),
  endMs: z.number().nullable(),
  // Totals an earlier tapedeck stored lack the kinds it did not know (`fault`): they count 0.
  matches: z
    .partialRecord(MatchKindSchema, count)
    .transform((m) => Object.fromEntries(MatchKindSchema.options.map((k) => [k, m[k] ?? 0])) as Record<MatchKind, number>),
  models: names,
  providers: names,
  tools: names,
}) satisfies z.ZodType<TapeStats>;

/** The running totals of a row, or why they are not what tapedeck writes. */
export function rowStats(value: unknown): { ok: true; stats: TapeStats } | { ok: false; error: string } {
  const parsed = TapeStatsSchema.safeParse(value);
  if (parsed.success) return { ok: true, stats: parsed.data };
  const issue = parsed.error.issues[0];
  const at = issue?.path.length ? ` (${issue.path.join('.')})` : '';
  return { ok: false, error: `its totals (stats column) are not what tapedeck writes${at}: written by something else?` };
}

/** Whether a row's name is one tapedeck would write. */
export function isTapeName(name: string): boolean {
  if (name.length > MAX_TAPE_NAME) return false;
  try {
    return validateTapeName(name) === name;
  } catch {
    return false;
  }
}
