/**
 * Reading a file a person wrote (the config, a price table, a side-effects or mock file) within sane bounds, before
 * any parser sees it: a YAML parser holds about 50 times a file's size (a 20 MB file took 940 MB), and nesting a few
 * thousand levels deep overflows its stack (or, in the `yaml` package, can abort the process outright). These files
 * are a few KB; one over {@link MAX_USER_FILE_BYTES}, or nested deeper than {@link MAX_USER_FILE_NESTING} levels, is
 * refused with one line. YAML is then parsed in linear time: the `yaml` package's own duplicate-key check compares
 * every key with every other (a 1 MiB mapping took minutes), so keys are checked here, once each.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { isScalar, LineCounter, parseDocument, visit } from 'yaml';
import { TapedeckError } from '../errors.js';

export const MAX_USER_FILE_BYTES = 1024 * 1024;
export const MAX_USER_FILE_NESTING = 128;

/** The file's text, read up to the limit (a pipe or `/dev/zero` included). Throws BAD_CONFIG naming `what` and the file. */
export function readUserFile(file: string, what: string, max = MAX_USER_FILE_BYTES): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    throw new TapedeckError('BAD_CONFIG', `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      if (total > max)
        throw new TapedeckError(
          'BAD_CONFIG',
          `${what} ${file} is over ${max / (1024 * 1024)} MiB: refused (such a file is a few KB; is it the right file?)`,
        );
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
  } catch (err) {
    if (err instanceof TapedeckError) throw err;
    throw new TapedeckError('BAD_CONFIG', `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  } finally {
    closeSync(fd);
  }
  const text = Buffer.concat(chunks, total).toString('utf8');
  const deep = nestingOver(text, MAX_USER_FILE_NESTING);
  if (deep !== undefined)
    throw new TapedeckError('BAD_CONFIG', `${what} ${file} nests deeper than ${MAX_USER_FILE_NESTING} levels (line ${deep}): refused`);
  return text;
}

/**
 * YAML text as a value (an empty document is undefined). Throws BAD_CONFIG: `${where} is not valid YAML: ...`, one
 * line; its `details` keep where the parser stopped (`place`: the line with a caret under the column, as the `yaml`
 * package draws it; `yamlCode`: its error code), for a value typed on the command line to show.
 */
export function parseUserYaml(text: string, where: string): unknown {
  const lines = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: false, lineCounter: lines });
  const first = doc.errors[0];
  if (first !== undefined) {
    const [head, ...place] = first.message.split('\n');
    throw new TapedeckError('BAD_CONFIG', `${where} is not valid YAML: ${head ?? first.code}`, {
      details: { place: place.filter((l) => l.trim() !== ''), yamlCode: first.code },
    });
  }
  let duplicate: string | undefined;
  visit(doc, {
    Map(_, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (seen.has(key)) {
          const at = isScalar(pair.key) && pair.key.range ? lines.linePos(pair.key.range[0]) : undefined;
          duplicate = `key "${key}" appears twice in one mapping${at ? ` (line ${at.line})` : ''}`;
          return visit.BREAK;
        }
        seen.add(key);
      }
      return undefined;
    },
  });
  if (duplicate !== undefined) throw new TapedeckError('BAD_CONFIG', `${where} is not valid YAML: ${duplicate}`);
  try {
    return doc.toJS();
  } catch (err) {
    throw new TapedeckError('BAD_CONFIG', `${where} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}

/**
 * The line where YAML (or JSON) text nests deeper than `max`, by flow brackets (`[`, `{` outside quotes and
 * comments) or by indentation (a line indented more than two columns per level), or undefined. Linear, no recursion.
 */
export function nestingOver(text: string, max: number): number | undefined {
  let depth = 0;
  let line = 1;
  let lineStart = true;
  let indent = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') {
      line++;
      lineStart = true;
      indent = 0;
      continue;
    }
    if (lineStart) {
      if (c === ' ' || c === '-') {
        if (++indent > 2 * max) return line;
        continue;
      }
      lineStart = false;
    }
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1] ?? ''))) {
      const nl = text.indexOf('\n', i);
      if (nl === -1) break;
      i = nl - 1;
    } else if ((c === '"' || c === "'") && opensScalar(text, i)) {
      // To the closing quote ('' inside single quotes, \" inside double quotes).
      let j = i + 1;
      for (; j < text.length; j++) {
        const d = text[j];
        if (c === '"' && d === '\\') j++;
        else if (d === c) {
          if (c === "'" && text[j + 1] === "'") j++;
          else break;
        } else if (d === '\n') line++;
      }
      i = j;
    } else if (c === '[' || c === '{') {
      if (++depth > max) return line;
    } else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
  }
  return undefined;
}

/** A quote starts a quoted scalar only where a value starts (an apostrophe inside `don't` does not). */
function opensScalar(text: string, at: number): boolean {
  for (let k = at - 1; k >= 0; k--) {
    const p = text[k];
    if (p === ' ' || p === '\t') continue;
    return p === '\n' || p === ':' || p === '-' || p === '[' || p === '{' || p === ',' || p === '?';
  }
  return true;
}
