/**
 * Copy a tape from one store to another exactly (`tapedeck push` / `pull`): the header and every record as the
 * source holds them, large bodies with them. A record the source cannot read is reported and left out, never fatal.
 */
import { TapedeckError } from '../errors.js';
import { ExchangeSchema, type Exchange } from './schema.js';
import type { ImportOptions, TapeProblem, TapeRecordCopy, TapeStore } from './store.js';
import { isPartLine } from './session-lines.js';
import { parseHeader, type TapeRecord } from './tape-reader.js';

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
      let ex: Exchange;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = undefined;
      }
      // A WebSocket session's messages are records of their own, which the import path does not carry yet: refuse
      // the copy rather than leave the messages behind.
      if (isPartLine(value))
        throw new TapedeckError(
          'BAD_ARGS',
          `${from.where(name)} holds WebSocket sessions (line ${line}), which push and pull cannot copy yet`,
        );
      try {
        const parsed = ExchangeSchema.safeParse(value ?? JSON.parse(text));
        if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? 'not a valid exchange');
        ex = parsed.data;
      } catch (err) {
        problems.push({ line, message: `${(err as Error).message}; not copied` });
        continue;
      }
      yield { ex, line: text };
    }
  }
  const exchanges = await to.importTape(
    { name, header, headerLine: first.value.text, records: records(), readBlob: (body) => from.readBlob(name, body) },
    opts,
  );
  return { name, exchanges, to: to.where(name), problems };
}
