/**
 * Fields of a record that the tape format does not have. The schemas read a record leniently (zod drops what it does
 * not know), and that is how a format grows: a newer tapedeck adds a field at the same format number, and the one
 * before reads the tape without it. The reader compares what it parsed with what it read and names the fields that did
 * not survive, once per tape (`UnknownFieldsTally`), so that a hand edit is seen and a newer tape is still served. A
 * field that stands where the answer's content should be (a stream whose `events` were renamed) is another matter:
 * what is left would serve an empty answer, so that record is not used (`contentInUnknownField`). A copy of a tape
 * (push, pull) moves its records' text, so it keeps every field. Only a higher format number is refused.
 */
import { VERSION } from '../version.js';
import type { Exchange } from './schema.js';

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

/**
 * Whether an exchange's answer lost its content to a field the format does not know: an HTTP (or stdio) response
 * with neither a body nor events, and an unknown field of its own in their place. Served, it would be an empty answer
 * (an SSE stream whose `events` were renamed, served as an empty 200); the reader skips it instead.
 */
export function contentInUnknownField(ex: Exchange, unknown: readonly string[]): boolean {
  const res = ex.response;
  if (res === undefined || ex.transport === 'websocket') return false;
  if (res.body !== undefined || res.events !== undefined || res.eventsFile !== undefined) return false;
  return unknown.some((p) => /^response\.[^.[]+$/.test(p));
}

/** The problem message for a record whose answer is in a field the format does not have. */
export function lostContentMessage(fields: readonly string[]): string {
  return `the exchange's answer is in a field the tape format does not know (${named(fields)}): edited by hand, or written by a newer tapedeck; skipped`;
}

/** The fields no record of a tape could be read with, named once for the whole tape. */
export interface UnknownFieldsTally {
  /** The unknown fields of the record at `line` (none: nothing to note). */
  note(line: number, fields: readonly string[]): void;
  /** One problem for the tape (at the first record that had any), or none. `writer`: the header's `tapedeck`. */
  problem(writer: string | undefined): { line: number; message: string } | undefined;
}

export function unknownFieldsTally(): UnknownFieldsTally {
  let records = 0;
  let first = 0;
  // Paths with array indexes folded (`frames[].x`): the same field in every message is one field.
  const fields = new Set<string>();
  return {
    note(line, found) {
      if (found.length === 0) return;
      first = records++ === 0 ? line : Math.min(first, line);
      for (const f of found) fields.add(f.replace(/\[\d+\]/g, '[]'));
    },
    problem(writer) {
      if (records === 0) return undefined;
      const who = writer === undefined ? 'an unknown tapedeck' : `tapedeck ${writer}`;
      return {
        line: first,
        message:
          `${records === 1 ? '1 record has' : `${records} records have`} fields this tapedeck (${VERSION}) does not know ` +
          `(${named([...fields])}): written by ${who}; ignored`,
      };
    },
  };
}

function named(fields: readonly string[]): string {
  return fields.slice(0, 3).join(', ') + (fields.length > 3 ? ` and ${fields.length - 3} more` : '');
}
