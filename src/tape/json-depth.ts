/**
 * JSON nested too deeply to walk. `JSON.parse` takes any depth, but `JSON.stringify` and every recursive walk
 * (redaction, describing, matching keys, diffs) overflow the stack somewhere past a few thousand levels: a 10 KB
 * body of nested arrays is enough. So JSON deeper than {@link MAX_JSON_DEPTH} is never turned into a value: a body
 * is kept as text, a message that deep is not parsed (a parse error), and a tape line that deep is skipped. The
 * limit is far above real API traffic (serde_json stops at 128, System.Text.Json at 64) and far below the stack.
 */

/** The deepest nesting of arrays and objects tapedeck turns into a value. */
export const MAX_JSON_DEPTH = 512;

/**
 * Whether JSON text nests arrays and objects deeper than `max`. Linear, without recursion: strings are skipped with
 * `indexOf` (most of a body's bytes), and text too short to be that deep is not scanned at all.
 */
export function exceedsJsonDepth(text: string, max = MAX_JSON_DEPTH): boolean {
  if (text.length <= 2 * max) return false;
  let depth = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // To the closing quote: one not preceded by an odd number of backslashes.
      let q = text.indexOf('"', i + 1);
      while (q !== -1) {
        let b = q - 1;
        while (text.charCodeAt(b) === 92 /* \ */) b--;
        if ((q - 1 - b) % 2 === 0) break;
        q = text.indexOf('"', q + 1);
      }
      if (q === -1) return false; // not JSON at all: the parser says so
      i = q + 1;
      continue;
    }
    if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) return true;
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
    i++;
  }
  return false;
}

/** The error a too-deep text gets from {@link parseJson}. */
export class JsonTooDeepError extends SyntaxError {
  constructor(max = MAX_JSON_DEPTH) {
    super(`JSON nested deeper than ${max} levels`);
    this.name = 'JsonTooDeepError';
  }
}

/** `JSON.parse` for text from outside: throws (a `SyntaxError`, like invalid JSON) when it nests deeper than the limit. */
export function parseJson(text: string): unknown {
  if (exceedsJsonDepth(text)) throw new JsonTooDeepError();
  return JSON.parse(text) as unknown;
}
