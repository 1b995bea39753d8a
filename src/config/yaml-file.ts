import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { TapedeckError } from '../errors.js';

/**
 * Read a YAML file the user wrote (a price table, a side-effects file, a mock file) and check it against its schema.
 * Every failure is one BAD_CONFIG line that names the file, what it is, and the first problem: unreadable (the
 * errno), not YAML (the parser's first line), or not the expected shape (the path and zod's message). An empty file
 * is `{}`.
 */
export function readYamlFile<S extends z.ZodType>(file: string, schema: S, what: string): z.output<S> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new TapedeckError('BAD_CONFIG', `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let value: unknown;
  try {
    value = parseYaml(text) ?? {};
  } catch (err) {
    throw new TapedeckError('BAD_CONFIG', `${what} ${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
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
