/**
 * Writing tapes into the in-memory store: a writer (the writer core over a sink that appends the records of one
 * commit in one go) and a whole tape imported from another store. Apart from `memory-store.ts`, which reads, lists
 * and deletes, the way the folder store's writer is apart from the folder store.
 */
import { TapedeckError } from '../../errors.js';
import { newTapeHeader, storedBody } from '../exchange-encoder.js';
import { validateTapeName } from '../paths.js';
import { highestMarker } from '../redaction/secrets.js';
import type { ImportOptions, TapeImport, TapeWriter, WriterOptions } from '../store.js';
import { parseTapeRecords } from '../tape-reader.js';
import { changed, MEMORY_LOCATION, memoryWhere, nextVersion, numbered, type MemoryContext, type MemoryTape } from './memory-tapes.js';
import { createTapeWriterCore, type WriterSink } from './writer-core.js';

export async function openMemoryWriter(ctx: MemoryContext, opts: WriterOptions): Promise<TapeWriter> {
  const name = validateTapeName(opts.name);
  const ifExists = opts.ifExists ?? 'fail';
  const existing = ctx.tapes.get(name);
  if (existing?.writing === true)
    throw new TapedeckError('TAPE_LOCKED', `tape "${name}" is locked by this process: another writer is writing it`, {
      status: 409,
      details: { pid: process.pid },
    });
  if (existing !== undefined && ifExists === 'fail')
    throw new TapedeckError('TAPE_EXISTS', `tape "${name}" already exists in ${MEMORY_LOCATION}`, { details: { tape: name } });
  const append = existing !== undefined && ifExists === 'append';
  let tape: MemoryTape;
  let seq = 0;
  let firstMarker = 1;
  if (append) {
    tape = existing;
    const parsed = parseTapeRecords(memoryWhere(name), numbered(tape));
    seq = parsed.exchanges.reduce((max, ex) => Math.max(max, ex.seq + 1), 0);
    firstMarker = highestMarker(tape.records.join('\n')) + 1;
  } else {
    const header = newTapeHeader(name, opts.header, opts.redact);
    tape = { header, records: [JSON.stringify(header)], modifiedAt: new Date(), version: nextVersion(ctx), writing: true };
    ctx.tapes.set(name, tape);
  }
  tape.writing = true;
  const count = tape.records.slice(1).filter((r) => r.startsWith(`{"type":"exchange"`)).length;
  const sink = memorySink(ctx, name, tape);
  const { writer } = createTapeWriterCore(opts, { header: tape.header, seq, pos: 0, count, firstMarker, append }, sink);
  return writer;
}

/** The records of one commit appended in one go: the memory store's sink for the writer core. */
function memorySink(ctx: MemoryContext, name: string, tape: MemoryTape): WriterSink {
  return {
    path: memoryWhere(name),
    putBlob: async (bytes, encoding) => {
      const body = storedBody(name, bytes, encoding);
      ctx.blobs.set(body.sha256, Buffer.from(bytes));
      return body;
    },
    async persist(records) {
      for (const r of records) tape.records.push(r.line);
      tape.modifiedAt = new Date();
      tape.version = nextVersion(ctx);
      changed(ctx, name);
    },
    // A session makes the tape format 2, a stream stored apart format 3 (see schema.ts).
    markFormat(format) {
      tape.records[0] = JSON.stringify({ ...tape.header, format });
    },
    failure: (err) => (err instanceof TapedeckError ? err : new TapedeckError('TAPE_WRITE_FAILED', String(err), { cause: err })),
    async release({ discard }) {
      tape.writing = false;
      if (discard) {
        ctx.tapes.delete(name);
        changed(ctx, name);
      }
    },
  };
}

export async function importIntoMemory(ctx: MemoryContext, tape: TapeImport, importOpts: ImportOptions | undefined): Promise<number> {
  const name = validateTapeName(tape.name);
  const existing = ctx.tapes.get(name);
  if (existing?.writing === true)
    throw new TapedeckError('TAPE_LOCKED', `tape "${name}" is locked by this process: another writer is writing it`, { status: 409 });
  if (existing !== undefined && importOpts?.overwrite !== true)
    throw new TapedeckError('TAPE_EXISTS', `tape "${name}" already exists in ${MEMORY_LOCATION}`, { details: { tape: name } });
  const records = [tape.headerLine];
  let count = 0;
  for await (const { ex, line, stored } of tape.records) {
    for (const body of stored) ctx.blobs.set(body.sha256, await tape.readBlob(body));
    records.push(line);
    if (ex !== undefined) count++;
  }
  ctx.tapes.set(name, { header: tape.header, records, modifiedAt: new Date(), version: nextVersion(ctx), writing: false });
  changed(ctx, name);
  return count;
}
