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
 *
 * Matched without backtracking, in time linear in the name for a given pattern (never a regular expression, which
 * `*_*_*_..._zz` against a long name of underscores would hold for minutes while every other test's request waits):
 * braces are expanded into alternatives, each alternative is split at its `*`s, and the pieces between them are found
 * left to right, each at the first place it fits. A pattern is at most {@link MAX_PATTERN_CHARS} characters and
 * {@link MAX_ALTERNATIVES} alternatives.
 */
import { TapedeckError } from '../errors.js';
import type { TestId } from '../tape/test-tape-name.js';

/** The longest pattern taken, in characters. */
export const MAX_PATTERN_CHARS = 512;
/** The most alternatives a pattern's braces may expand to. */
export const MAX_ALTERNATIVES = 64;

export interface TestPattern {
  /** The patterns as given (for messages). */
  readonly globs: readonly string[];
  /** Whether any pattern matches one of these names whole. */
  matches(names: readonly string[]): boolean;
}

export function createTestPattern(globs: readonly string[]): TestPattern {
  const alternatives = globs.flatMap((glob) => expand(glob).map(piecesOf));
  return {
    globs,
    matches: (names) =>
      names.some((name) => {
        const chars = Array.from(name);
        return alternatives.some((alt) => matchPieces(chars, alt));
      }),
  };
}

/** The names a test is matched by: full name (vitest's way), node id (pytest's way), and its tape. */
export function namesOfTest(test: TestId, tape: string): string[] {
  const parts = [test.file, ...test.names].filter((p) => p !== '');
  return [parts.join(' > '), parts.join('::'), tape];
}

/** One character of a pattern: itself (a code point), or `?` (any one). `*` splits a pattern into pieces. */
const ONE = Symbol('?');
const ANY = Symbol('*');
type Unit = string | typeof ONE | typeof ANY;
type Piece = (string | typeof ONE)[];

/** A glob's alternatives (its braces expanded), each as its characters; BAD_ARGS for one too long or too wide. */
function expand(glob: string): Unit[][] {
  if (glob.trim() === '')
    throw new TapedeckError('BAD_ARGS', '--rerecord needs a pattern (a glob over test or tape names, e.g. "*celsius*")');
  const chars = Array.from(glob);
  if (chars.length > MAX_PATTERN_CHARS)
    throw new TapedeckError('BAD_ARGS', `--rerecord pattern is ${chars.length} characters long: at most ${MAX_PATTERN_CHARS}`);
  const state = { chars, at: 0, glob };
  return sequence(state, false);
}

/** The alternatives of the characters from `state.at` to the end (or, inside braces, to the next `,` or `}`). */
function sequence(state: { chars: string[]; at: number; glob: string }, inBraces: boolean): Unit[][] {
  let alts: Unit[][] = [[]];
  const add = (u: Unit): void => {
    for (const a of alts) a.push(u);
  };
  while (state.at < state.chars.length) {
    const c = state.chars[state.at] as string;
    if (inBraces && (c === ',' || c === '}')) return alts;
    state.at++;
    if (c === '\\' && state.at < state.chars.length) add(state.chars[state.at++] as string);
    else if (c === '*') add(ANY);
    else if (c === '?') add(ONE);
    else if (c === '{') {
      const options: Unit[][] = [];
      for (;;) {
        options.push(...sequence(state, true));
        if (state.at >= state.chars.length) throw unclosed(state.glob);
        if (state.chars[state.at++] === '}') break;
      }
      if (alts.length * options.length > MAX_ALTERNATIVES)
        throw new TapedeckError(
          'BAD_ARGS',
          `--rerecord pattern "${state.glob}" has more than ${MAX_ALTERNATIVES} alternatives: give fewer, or several patterns`,
        );
      alts = alts.flatMap((a) => options.map((o) => [...a, ...o]));
    } else add(c);
  }
  return alts;
}

function unclosed(glob: string): TapedeckError {
  return new TapedeckError('BAD_ARGS', `--rerecord pattern "${glob}" opens a { it does not close`);
}

/** An alternative split at its `*`s: the pieces before, between and after them (one piece when it has none). */
function piecesOf(alt: Unit[]): Piece[] {
  const pieces: Piece[] = [[]];
  for (const u of alt) {
    if (u === ANY) pieces.push([]);
    else (pieces.at(-1) as Piece).push(u);
  }
  return pieces;
}

/** Whether `piece` matches `name` at `at`. */
function fits(name: readonly string[], at: number, piece: Piece): boolean {
  for (let i = 0; i < piece.length; i++) if (piece[i] !== ONE && piece[i] !== name[at + i]) return false;
  return true;
}

/**
 * Whether the pieces match the whole name: the first at its start, the last at its end, each one between at the
 * first place it fits after the one before (the first place is always as good as any later one: what follows a `*`
 * can use whatever is left). No step is taken back: at most name × pattern comparisons.
 */
function matchPieces(name: readonly string[], pieces: readonly Piece[]): boolean {
  const first = pieces[0] as Piece;
  if (pieces.length === 1) return name.length === first.length && fits(name, 0, first);
  const last = pieces.at(-1) as Piece;
  const end = name.length - last.length;
  if (end < first.length || !fits(name, 0, first) || !fits(name, end, last)) return false;
  let at = first.length;
  for (let p = 1; p < pieces.length - 1; p++) {
    const piece = pieces[p] as Piece;
    let found = -1;
    for (let i = at; i + piece.length <= end; i++)
      if (fits(name, i, piece)) {
        found = i;
        break;
      }
    if (found === -1) return false;
    at = found + piece.length;
  }
  return true;
}
