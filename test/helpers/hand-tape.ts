/**
 * A tape written by hand, line by line, as an older tapedeck (or a user's editor) left it: for tests of what reads
 * tapes it did not write itself (scan on secrets an older version kept, a forward-proxy tape, a tape in use).
 * Each part has the fields every line needs; a test passes only what its case is about.
 */
import { writeFileSync } from 'node:fs';

/** A tape's first line. */
export function handHeader(name: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'header',
    format: 1,
    tapedeck: '0.1.0',
    name,
    createdAt: '2026-01-01T00:00:00.000Z',
    mode: 'record',
    routes: [],
    ...fields,
  };
}

/** An exchange line: an empty HTTP call on `/r` that took 1 ms, with `fields` over it. */
export function handExchange(seq: number, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'exchange',
    id: String(seq).padStart(6, '0'),
    seq,
    startedAt: '2026-01-01T00:00:00.000Z',
    offsetMs: 0,
    transport: 'http',
    route: '/r',
    request: { method: 'GET', path: '/', query: [], headers: {}, body: { kind: 'empty' } },
    timing: { durationMs: 1 },
    ...fields,
  };
}

/** Write `lines` (a header, then exchanges) to `file`, one JSON object a line. */
export function writeHandTape(file: string, lines: readonly unknown[]): void {
  writeFileSync(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
}
