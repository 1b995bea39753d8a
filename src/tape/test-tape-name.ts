/**
 * The tape of a test, from what names it: its file (relative to the project) and the names within it, outermost
 * first (describe blocks or a class, then the test; a pytest id's parameters are part of its name). One rule for
 * every test-runner helper: `tapedeck serve` answers `GET /@?file=...&name=...` with it, and the vitest helper calls
 * it in-process, so a test has the same tape whichever way its name reaches the server.
 *
 * Each part becomes a readable slug (letters of any script, digits, `_`, `.`, `-`; anything else a `-`); a part the
 * slug does not keep whole (brackets, `+`, `/`, a leading dot, too long) gets a short hash of the part as it was,
 * so `test_calc[1+1]` and `test_calc[1-1]` are two tapes. A part made of kept characters and single spaces only
 * (`answers in celsius`) keeps the name it always had: spaces become `-`, no hash.
 */
import { hash } from 'node:crypto';
import { z } from 'zod';
import { MAX_TAPE_NAME_PART } from './paths.js';

export const TestIdSchema = z.object({
  /** The test's file, relative to the project root (`tests/agent.test.ts`, `tests/test_agent.py`). */
  file: z.string(),
  /** Its suites (describe blocks, a class) and its own name, outermost first. */
  names: z.array(z.string()).min(1),
});
export type TestId = z.infer<typeof TestIdSchema>;

/** A test file's suffix, taken off its tape's name: `.test.ts`, `.spec.mjs`, `.ts`, `.py`. */
const TEST_FILE_SUFFIX = /\.(test|spec)\.[cm]?[jt]sx?$|\.[cm]?[jt]sx?$|\.py$/;
/** The characters a slug keeps; a run of any others becomes one `-`. */
const DROPPED = /[^\p{L}\p{N}\p{M}_.-]+/gu;
/** Slugs that would not name a tape file of their own (the `.jsonl` taken off; a tape's side folder). */
const RESERVED_END = /\.(jsonl|files)$/;
const HASH_CHARS = 8;

export function tapeNameForTest(test: TestId): string {
  return [...fileParts(test.file), ...test.names.filter((n) => n !== '')].map(testNamePart).join('/');
}

/** One part of a test's name as a tape-name part: its slug, with `-` and a hash of the part when the slug lost anything. */
export function testNamePart(text: string): string {
  const slug = slugOf(text);
  if (slug !== '' && slug === text.replaceAll(' ', '-') && !RESERVED_END.test(slug) && utf8Length(slug) <= MAX_TAPE_NAME_PART) return slug;
  const digest = hash('sha256', text, 'hex').slice(0, HASH_CHARS);
  const kept = truncateUtf8(slug === '' ? '_' : slug, MAX_TAPE_NAME_PART - HASH_CHARS - 1).replace(/-+$/, '');
  return `${kept}-${digest}`;
}

/**
 * The tape the same test had under the earlier rule (ASCII slugs, nothing added when a part lost characters, so
 * several tests could share one): `tapedeck serve` looks for it to say where a test's earlier recording is.
 */
export function earlierTapeNameForTest(test: TestId): string {
  const ascii = (text: string): string =>
    text
      .replace(/[^\w.-]+/g, '-')
      .replace(/-{2,}/g, '-')
      .replace(/^[-.]+|-+$/g, '') || '_';
  return [...fileParts(test.file), ...test.names.filter((n) => n !== '')].map(ascii).join('/');
}

function fileParts(file: string): string[] {
  return file
    .replace(/\\/g, '/')
    .replace(TEST_FILE_SUFFIX, '')
    .split('/')
    .filter((p) => p !== '' && p !== '.' && p !== '..');
}

function slugOf(text: string): string {
  return text
    .normalize('NFC')
    .replace(DROPPED, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|-+$/g, '');
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function truncateUtf8(text: string, bytes: number): string {
  if (utf8Length(text) <= bytes) return text;
  let out = '';
  let used = 0;
  for (const ch of text) {
    const n = utf8Length(ch);
    if (used + n > bytes) break;
    out += ch;
    used += n;
  }
  return out;
}
