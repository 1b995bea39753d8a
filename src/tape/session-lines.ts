/**
 * Exchanges that grow while they are open (WebSocket sessions) are written as several lines: the exchange line when
 * the session opens, `frames` lines as messages are relayed, an `end` line when it ends. The writer side is
 * `TapeWriter.begin`; this is the reader side: the continuation lines merged into their exchange, in file order.
 */
import { unknownFields, type UnknownFieldsTally } from './unknown-fields.js';
import { EndLineSchema, FramesLineSchema, type Exchange } from './schema.js';

/** What the reader could not use, as `tape-reader.ts` reports it. */
interface Problem {
  line: number;
  message: string;
}

/** A continuation line, not yet validated: its line number and parsed value. */
export interface PartLine {
  line: number;
  value: unknown;
}

/** Whether a parsed tape line is a continuation line (`frames` or `end`) rather than a header or an exchange. */
export function isPartLine(value: unknown): boolean {
  const type = (value as { type?: unknown } | null)?.type;
  return type === 'frames' || type === 'end';
}

/** The `error.code` of a session the tape has no end for. */
export const SESSION_CUT = 'SESSION_CUT';

/**
 * Merge continuation lines into the exchanges they continue (in place): frames appended in order, the end applied.
 * A line for an exchange that is not on the tape, one after its end, or one that is not valid is a problem and is
 * skipped; fields a line has that the format does not know go to `unknown`. A session with no end line reads as cut (`error.code` `SESSION_CUT`), never as complete.
 */
export function mergeSessionLines(
  exchanges: readonly Exchange[],
  parts: readonly PartLine[],
  problems: Problem[],
  unknown?: UnknownFieldsTally,
): void {
  const open = new Map<string, Exchange>();
  for (const ex of exchanges) if (ex.websocket !== undefined) open.set(ex.id, ex);
  const ended = new Set<string>();
  for (const part of parts) {
    const type = (part.value as { type: string }).type;
    const parsed = type === 'frames' ? FramesLineSchema.safeParse(part.value) : EndLineSchema.safeParse(part.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push({
        line: part.line,
        message: `not a valid ${type} line (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}); skipped`,
      });
      continue;
    }
    // Fields a newer tapedeck added: ignored, named once for the tape by the reader.
    unknown?.note(part.line, unknownFields(part.value, parsed.data));
    const id = parsed.data.exchange;
    const ex = open.get(id);
    if (ex === undefined || ended.has(id)) {
      problems.push({
        line: part.line,
        message: `${type} line for ${ended.has(id) ? 'the ended' : 'no open'} session ${id}; skipped`,
      });
      continue;
    }
    const session = ex.websocket as NonNullable<Exchange['websocket']>;
    if (parsed.data.type === 'frames') {
      for (const f of parsed.data.frames) session.frames.push(f);
      continue;
    }
    const end = parsed.data;
    ended.add(id);
    ex.timing.durationMs = end.durationMs;
    if (end.error !== undefined) ex.error = end.error;
    if (end.match !== undefined) ex.match = end.match;
    if (end.notes !== undefined) ex.notes = { ...ex.notes, ...end.notes };
  }
  for (const [id, ex] of open) {
    if (ended.has(id) || ex.error !== undefined) continue;
    const last = ex.websocket?.frames.at(-1);
    if (last !== undefined) ex.timing.durationMs = Math.max(ex.timing.durationMs, last.offsetMs);
    ex.error = {
      code: SESSION_CUT,
      message: 'the tape has no end for this session: it was still open when the tape was read, or the recorder stopped before it ended',
      phase: 'stream',
    };
  }
}
