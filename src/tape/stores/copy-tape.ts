/**
 * Copy a tape from one store to another exactly (`tapedeck push` / `pull`): the header and every record as the
 * source holds them, large bodies with them. A record the source cannot read is reported and left out, never fatal.
 */
import { TapedeckError } from '../../errors.js';
import { ExchangeSchema } from '../schema.js';
import type { ImportOptions, StoredBody, TapeProblem, TapeRecordCopy, TapeStore } from '../store.js';
import { isPartLine } from '../session-lines.js';
import { parseHeader, type TapeRecord } from '../tape-reader.js';

export interface CopiedTape {
  name: string;
  exchanges: number;
  /** Where it went, for messages. */
  to: string;
  problems: TapeProblem[];
}

export async function copyTape(from: TapeStore, name: string, to: TapeStore, opts: ImportOptions = {}): Promise<CopiedTape> {
  const problems: TapeProblem[] = [];
  const iter = from.lines(name)[Symbol.asyncIterator]();
  let first: IteratorResult<TapeRecord>;
  do first = await iter.next();
  while (first.done !== true && first.value.text.trim() === '');
  if (first.done === true) throw new TapedeckError('TAPE_CORRUPT', `${from.where(name)}: empty tape (no header line)`);
  const header = parseHeader(from.where(name), JSON.parse(first.value.text), first.value.line);
  async function* records(): AsyncGenerator<TapeRecordCopy> {
    for (;;) {
      const next = await iter.next();
      if (next.done === true) return;
      const { line, text } = next.value;
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        problems.push({ line, message: 'not valid JSON; not copied' });
        continue;
      }
      // A session's continuation record (`frames`, `end`): copied as it is, after the exchange it continues.
      if (isPartLine(value)) {
        yield { line: text, stored: storedIn(value) };
        continue;
      }
      const parsed = ExchangeSchema.safeParse(value);
      if (!parsed.success) {
        problems.push({ line, message: `${parsed.error.issues[0]?.message ?? 'not a valid exchange'}; not copied` });
        continue;
      }
      yield { ex: parsed.data, line: text, stored: storedIn(parsed.data) };
    }
  }
  const exchanges = await to.importTape(
    { name, header, headerLine: first.value.text, records: records(), readBlob: (body) => from.readBlob(name, body) },
    opts,
  );
  return { name, exchanges, to: to.where(name), problems };
}

/**
 * The large bodies a record refers to: request and response bodies, a stream's events stored apart, and session
 * messages (an exchange's or a `frames` record's).
 */
function storedIn(value: unknown): StoredBody[] {
  const out: StoredBody[] = [];
  const add = (b: unknown): void => {
    const body = b as { kind?: unknown } | undefined;
    if (body?.kind === 'file') out.push(body as StoredBody);
  };
  const rec = value as {
    request?: { body?: unknown };
    response?: { body?: unknown; eventsFile?: unknown };
    websocket?: { frames?: { data?: unknown }[] };
    frames?: { data?: unknown }[];
  };
  add(rec.request?.body);
  add(rec.response?.body);
  add(rec.response?.eventsFile);
  for (const f of [...(rec.websocket?.frames ?? []), ...(Array.isArray(rec.frames) ? rec.frames : [])]) add(f?.data);
  return out;
}
