/**
 * Fields of a record that the tape format does not have. The schemas read a record leniently (zod drops what it does
 * not know), so a field renamed by a hand edit, or written by a tapedeck that knows more, would vanish without a word,
 * and replay would serve what is left (an SSE answer whose `events` were renamed, served as an empty 200). The reader
 * compares what it parsed with what it read: a field that did not survive is named, and the record is not used.
 */

/** Paths (`response.evnts`) of the fields of `input` that `parsed` (what the schema made of it) does not have. */
export function unknownFields(input: unknown, parsed: unknown, at = ''): string[] {
  if (input === null || parsed === null || typeof input !== 'object' || typeof parsed !== 'object') return [];
  if (Array.isArray(input)) {
    if (!Array.isArray(parsed)) return [];
    return input.flatMap((v, i) => unknownFields(v, parsed[i], `${at}[${i}]`));
  }
  const out: string[] = [];
  const kept = parsed as Record<string, unknown>;
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    const path = at === '' ? key : `${at}.${key}`;
    if (!(key in kept)) {
      // A field written as null or left undefined means nothing either way.
      if (value !== undefined && value !== null) out.push(path);
      continue;
    }
    out.push(...unknownFields(value, kept[key], path));
  }
  return out;
}

/** The problem message for a record with fields the format does not have. */
export function unknownFieldsMessage(what: string, fields: readonly string[]): string {
  const named = fields.slice(0, 3).join(', ') + (fields.length > 3 ? ` and ${fields.length - 3} more` : '');
  return `${what} has ${fields.length === 1 ? 'a field' : 'fields'} the tape format does not know (${named}): edited by hand, or written by a newer tapedeck; skipped`;
}
