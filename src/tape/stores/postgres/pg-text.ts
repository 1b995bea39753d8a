/**
 * U+0000 in what goes to PostgreSQL. Its `text` and `jsonb` cannot hold the character at all, and its JSON functions
 * (`json_to_recordset`, which the writer's one-statement commit reads its batch with) refuse the `\u0000` escape
 * that stands for it in JSON text; a `json` column keeps the escape as text, as it keeps every record. So a record
 * whose text holds that escape (a prompt or a tool result with a NUL in it) travels in the batch as base64 of its
 * text, decoded into its `json` column by the statement: stored, and read back, byte for byte. The few text and jsonb
 * values derived from records for listing and filtering (model, tool names, the running totals) hold U+FFFD in its
 * place: the record itself keeps the truth.
 */

const NUL_ESCAPE = '\\u0000';

/**
 * Whether JSON text may hold a `\u0000` escape. `"0000"` first: V8 finds that short pattern by scanning for its
 * first character, rare in tape lines, where the escape's own first characters (`\`, `u`) are everywhere (a
 * 9 KB line: ~0.2 µs against ~6 µs).
 */
function mayHoldNul(text: string): boolean {
  return text.includes('0000') && text.includes(NUL_ESCAPE);
}

/**
 * A record's text as a field of a batch: `"doc":<text>` as it is, or `"doc64":"<base64 of text>"` when the text may
 * hold a `\u0000` escape (an escaped backslash followed by `u0000` takes the same way: still exact).
 */
export function docField(line: string): string {
  return mayHoldNul(line) ? `"doc64":"${Buffer.from(line, 'utf8').toString('base64')}"` : `"doc":${line}`;
}

/** The SQL that reads a batch row's record: its `doc`, or its `doc64` decoded. */
export const DOC_OF_ROW = `COALESCE(r.doc, convert_from(decode(r.doc64, 'base64'), 'UTF8')::json)`;

/** JSON text fit for a `jsonb` value or a `json_to_recordset` text field: each `\u0000` escape becomes `\ufffd`. */
export function pgJson(json: string): string {
  // An escape is `\u0000` after an even run of backslashes (an odd run makes it a literal backslash and "u0000").
  return mayHoldNul(json) ? json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd') : json;
}
