/**
 * Which tests re-record their tape (`--rerecord`, `TAPEDECK_RERECORD`): a glob over what names a test, so the names
 * a developer sees in the runner's output work as they are. A test matches when a pattern matches, whole, any of its
 * names: its full name as vitest prints it (`tests/agent.test.ts > weather > answers in celsius`), its pytest node id
 * (`tests/test_agent.py::TestWeather::test_celsius`), or its tape (`tests/agent/weather/answers-in-celsius`). A
 * request that names its tape itself (`/@NAME/...`) is matched by the tape name alone.
 *
 * The syntax, small on purpose: `*` any run of characters (`/` included), `?` one character, `{a,b}` either
 * alternative (so one environment variable can hold several patterns), `\` takes the next character as it is.
 * Everything else is itself; case counts.
 */
import { TapedeckError } from '../errors.js';
import type { TestId } from '../tape/test-tape-name.js';

export interface TestPattern {
  /** The patterns as given (for messages). */
  readonly globs: readonly string[];
  /** Whether any pattern matches one of these names whole. */
  matches(names: readonly string[]): boolean;
}

export function createTestPattern(globs: readonly string[]): TestPattern {
  const regexes = globs.map(globToRegExp);
  return { globs, matches: (names) => regexes.some((re) => names.some((n) => re.test(n))) };
}

/** The names a test is matched by: full name (vitest's way), node id (pytest's way), and its tape. */
export function namesOfTest(test: TestId, tape: string): string[] {
  const parts = [test.file, ...test.names].filter((p) => p !== '');
  return [parts.join(' > '), parts.join('::'), tape];
}

function globToRegExp(glob: string): RegExp {
  if (glob.trim() === '')
    throw new TapedeckError('BAD_ARGS', '--rerecord needs a pattern (a glob over test or tape names, e.g. "*celsius*")');
  let out = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '\\' && i + 1 < glob.length) out += escape(glob[++i] as string);
    else if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '{') {
      depth++;
      out += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      out += ')';
    } else if (c === ',' && depth > 0) out += '|';
    else out += escape(c);
  }
  if (depth !== 0) throw new TapedeckError('BAD_ARGS', `--rerecord pattern "${glob}" opens a { it does not close`);
  return new RegExp(`^${out}$`, 'su');
}

function escape(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
