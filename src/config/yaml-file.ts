import type { z } from 'zod';
import { TapedeckError } from '../errors.js';
import { parseUserYaml, readUserFile } from './user-file.js';

/**
 * Read a YAML file the user wrote (a price table, a side-effects file, a mock file) and check it against its schema.
 * Every failure is one BAD_CONFIG line that names the file, what it is, and the first problem: unreadable (the
 * errno), not YAML (the parser's first line), or not the expected shape (the path and zod's message). An empty file
 * is `{}`.
 */
export function readYamlFile<S extends z.ZodType>(file: string, schema: S, what: string): z.output<S> {
  return parseYamlText(readUserFile(file, what), file, schema, what);
}

/** The same check over a YAML file's text already read (a file shipped with tapedeck: src/shipped.ts); `file` names it. */
export function parseYamlText<S extends z.ZodType>(text: string, file: string, schema: S, what: string): z.output<S> {
  const value = parseUserYaml(text, `${what} ${file}`) ?? {};
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TapedeckError(
      'BAD_CONFIG',
      `bad ${what} ${file}: ${issue ? `${issue.path.join('.') || '(top)'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data;
}
