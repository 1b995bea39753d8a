/**
 * Text from a tape or a store made safe for a terminal: a tape name, a model or an error read from rows that anyone
 * with access to the database (or to the tape folder) may have written. A control character (C0, DEL, C1) is shown
 * as an escape a person can read (`\x1b`), never sent raw for the terminal to act on.
 */

/** `text` with its control characters written as `\xNN`. */
export function visibleText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
