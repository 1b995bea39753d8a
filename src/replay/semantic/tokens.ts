/**
 * A text as the similarity guard reads it: words, once letter case, whitespace, punctuation, contractions and
 * per-run noise are set aside. Punctuation is set aside in *prose* only. Inside code (a fenced block, an inline
 * `code` span), and in a sentence that holds a path, a command, a formula, a query or a regex (`rm -rf ./build`,
 * `7 // 2`, `\d{3,}`, `5 * 5`), every symbol is a word of its own, and a change to one is a change of meaning.
 * Identifiers the user wrote (a UUID, a timestamp with a time of day) stay as one word each; per-run noise becomes a
 * placeholder (`noise.ts`).
 */
import { MARKER, maskNoise, placeholder, type MarkedValue, type Position } from './noise.js';
import { ASK_FRAME, ASK_TOKEN, CONTRACTIONS, FILLER, FUNCTION_WORDS } from './words.js';

/** A text, analysed once per recorded exchange. */
export interface TextInfo {
  /** Lower-case words and symbols, contractions expanded, per-run noise replaced by `<time>`, `<uuid>`, `<id>`. */
  words: string[];
  /** `words` joined by single spaces: the normalised text. */
  normalised: string;
  /** Words written as names: capitalised mid-sentence, inner capitals (iPhone) or all caps (NASA). */
  names: ReadonlySet<string>;
  /** Words written capitalised anywhere, sentence starts included. */
  capitalised: ReadonlySet<string>;
  /** Words and symbols written inside code, paths, formulas, queries and regexes: every one of them is meaning. */
  code: ReadonlySet<string>;
  /** Identifiers kept as meaning (a UUID or a timestamp the user wrote), as words. */
  ids: ReadonlySet<string>;
  /** Per-run values set aside, in the order they stand in the text. */
  aside: readonly MarkedValue[];
  /** The identifiers kept, in order: the slots a tape that shows them varying may set aside. */
  kept: readonly MarkedValue[];
  /** `normalised` with every kept identifier as its placeholder (the same as `normalised` when there are none). */
  loose: string;
  /** Sum of the words' weights (function words count 0.3): what a change is measured against. */
  mass: number;
  /** Each word's count, filled by the first comparison that needs it (`text.ts`). */
  counts?: Map<string, number>;
}

export const FUNCTION_WEIGHT = 0.3;
export const wordWeight = (w: string): number => (FUNCTION_WORDS.has(w) ? FUNCTION_WEIGHT : 1);

const QUOTES = `"'“”‘’«»„‚‹›`;
const SENTENCE_MARKS = '.,;:!?…。、';
/** Prose punctuation a word may carry at its start or end (quotes, parentheses, sentence marks, CJK marks). */
const PROSE_LEAD = new Set(`${QUOTES}(¿¡「『【《〈`);
const PROSE_TRAIL = new Set(`${QUOTES})]${SENTENCE_MARKS}」』】》〉`);
/** In a sentence with code only quotes and sentence marks come off a word: brackets are part of the formula. */
const CODE_EDGE = new Set(`${QUOTES}${SENTENCE_MARKS}`);
const CODE_LEAD = new Set(QUOTES);
/** The common case, a plain ASCII word with at most a sentence mark: no Unicode pattern needed. */
const ASCII_WORD = /^[A-Za-z0-9]+$/;
const ASCII_CHUNK = /^([A-Za-z0-9]+)[.,;:!?]?$/;
/** A standalone chunk of prose punctuation (a dash, an ellipsis, a quote, a bracket). */
const PROSE_MARKS = new RegExp(`^[${QUOTES}.,;:!?…–—()\\[\\]。、「」『』【】《》〈〉]+$`, 'u');
const WORD = /^[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}]+)*(?:-[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}]+)*)*$/u;
const NUMBER = /^([$€£¥])?([-+]?\p{N}+(?:[.,:/-]\p{N}+)*)(%)?$/u;
/** Abbreviations written with dots (e.g., i.e., U.S., Ph.D.): one word, not a path. */
const ABBREVIATION = /^(?:\p{L}{1,2}\.){1,3}\p{L}{0,2}$/u;
const BULLETS = new Set(['-', '*', '+', '•', '>', '#', '##', '###', '####']);
const CODE_PART = /[\p{L}\p{M}\p{N}_]+|[^\s\p{L}\p{M}\p{N}_]+/gu;
/** Fenced blocks and inline code spans. */
const CODE_SPAN = /```[\s\S]*?(?:```|$)|`[^`\n]+`/g;
/** Sentences: split after sentence marks followed by a space, and at line ends. */
const SENTENCE = /(?<=[.!?;:。！？])\s+|\n+/u;
const CJK = /([\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}])([,.;:!?。、」』】》〉)]+)(?=\S)/gu;

const NONE: ReadonlySet<string> = new Set();

type Chunk =
  | { kind: 'marker'; text: string }
  | { kind: 'prose'; text: string; core: string }
  | { kind: 'operator'; text: string }
  | { kind: 'bracket'; text: string }
  | { kind: 'code'; text: string }
  | { kind: 'drop' };

/** The words of a text as it sits at `position` (only a system prompt's clocks and UUIDs are per-run noise). */
export function analyzeText(text: string, position: Position = 'user'): TextInfo {
  const masked = maskNoise(text.normalize('NFKC'), position);
  const t = new Tokens(masked.aside, masked.kept);
  let last = 0;
  for (const m of masked.text.matchAll(CODE_SPAN)) {
    t.prose(masked.text.slice(last, m.index));
    if (m[0].startsWith('```')) t.block(m[0].replace(/^```|```$/g, ''));
    else for (const chunk of m[0].slice(1, -1).split(/\s+/)) if (chunk !== '') t.code(chunk);
    t.sentenceStart();
    last = m.index + m[0].length;
  }
  t.prose(masked.text.slice(last));
  return t.info();
}

/** The state of one text's tokenising: the words so far and what is known of them. */
class Tokens {
  readonly words: string[] = [];
  // Made when the first word needs them: most texts have no code or identifier, many no name.
  private names: Set<string> | undefined;
  private capitalised: Set<string> | undefined;
  private codeWords: Set<string> | undefined;
  private ids: Set<string> | undefined;
  private readonly aside: MarkedValue[] = [];
  private readonly kept: MarkedValue[] = [];
  /** Indices of `words` where a sentence starts (for request frames). */
  private readonly starts: number[] = [];
  private atStart = true;

  constructor(
    private readonly asideValues: readonly MarkedValue[],
    private readonly keptValues: readonly MarkedValue[],
  ) {}

  sentenceStart(): void {
    this.atStart = true;
  }

  /** Prose: sentence by sentence; a sentence with a path, command or formula keeps its symbols. */
  prose(text: string): void {
    for (const sentence of text.replace(CJK, '$1$2 ').split(SENTENCE)) {
      const raw = sentence.split(/\s+/).filter((c) => c !== '');
      const chunks = raw.map((c, i) => classify(c, i === 0, raw[i - 1], raw[i + 1]));
      const code = chunks.some((c) => c.kind === 'code' || c.kind === 'operator');
      this.atStart = true;
      for (const c of chunks) {
        if (c.kind === 'drop') continue;
        if (c.kind === 'marker') this.marker(c.text);
        else if (c.kind === 'operator') this.symbol(c.text);
        else if (c.kind === 'bracket') {
          if (code) this.symbol(c.text);
        } else if (c.kind === 'code') this.codeChunk(c.text, false);
        else if (code && /[()[\]]/.test(c.text)) this.codeChunk(stripCodeEdges(c.text), false);
        else this.plain(c.core);
      }
    }
    this.atStart = true;
  }

  /**
   * A fenced block, line by line. Indentation is structure in code (a Python `return` inside or after an `if`), so a
   * line indented deeper than the one before adds `⇥`, and each level it comes back out adds `⇤`; how many spaces
   * make a level is set aside (doubled or halved indentation reads the same).
   */
  block(text: string): void {
    const levels: number[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const indent = /^[ \t]*/.exec(line)![0].replace(/\t/g, '    ').length;
      if (levels.length > 0) {
        if (indent > levels.at(-1)!) {
          this.symbol('⇥');
          levels.push(indent);
        } else
          while (levels.length > 1 && indent < levels.at(-1)!) {
            levels.pop();
            this.symbol('⇤');
          }
      } else levels.push(indent);
      for (const chunk of line.split(/\s+/)) if (chunk !== '') this.code(chunk);
    }
  }

  /** A chunk inside a code span: every part a word, every symbol kept. */
  code(chunk: string): void {
    if (MARKER.test(chunk)) this.marker(chunk);
    else this.codeChunk(chunk, true);
  }

  /**
   * Code: letter runs, digits and symbol runs, each a word. Letter case is set aside as in prose (`SELECT` is
   * `select`), except for a single letter, where it is the meaning: `\d` / `\D` (after a backslash anywhere), and
   * in a code span also `[A-Z]` / `[a-z]`, `C:` / `c:`. (In prose, `Q&A` and `q&a` are the same.)
   */
  private codeChunk(chunk: string, span: boolean): void {
    for (const m of chunk.matchAll(CODE_PART)) {
      const part = m[0];
      const keepCase = part.length === 1 && (span || chunk[m.index - 1] === '\\');
      this.push(keepCase ? part : part.toLowerCase(), true);
    }
    this.atStart = false;
  }

  private symbol(s: string): void {
    this.push(s, true);
    this.atStart = false;
  }

  private marker(text: string): void {
    const [, which, n] = MARKER.exec(text) as RegExpExecArray;
    const value = (which === 'a' ? this.asideValues : this.keptValues)[Number(n)] as MarkedValue;
    if (which === 'a') {
      this.aside.push(value);
      this.words.push(placeholder(value.kind));
    } else {
      this.kept.push(value);
      const word = value.value.toLowerCase();
      (this.ids ??= new Set()).add(word);
      this.words.push(word);
    }
    this.atStart = false;
  }

  /** A word, a number or an abbreviation of prose. */
  private plain(core: string): void {
    if (ASCII_WORD.test(core)) {
      this.word(core);
      return;
    }
    const num = NUMBER.exec(core);
    if (num !== null) {
      if (num[1] !== undefined) this.push(num[1], false);
      this.push(num[2] as string, false);
      if (num[3] !== undefined) this.push('%', false);
      this.atStart = false;
      return;
    }
    if (ABBREVIATION.test(core)) {
      this.push(core.toLowerCase(), false);
      this.atStart = false;
      return;
    }
    for (const surface of core.split('-')) this.word(surface);
  }

  private word(surface: string): void {
    const sentenceStart = this.atStart;
    if (sentenceStart) this.starts.push(this.words.length);
    this.atStart = false;
    const lower = surface.includes('’') ? surface.toLowerCase().replace(/’/g, "'") : surface.toLowerCase();
    const expanded = CONTRACTIONS.get(lower);
    if (expanded !== undefined) {
      this.words.push(...expanded);
      return;
    }
    this.words.push(lower);
    if (lower === surface) return;
    // Written with capitals: a name unless it only starts a sentence.
    if (/^\p{Lu}/u.test(surface)) (this.capitalised ??= new Set()).add(lower);
    const innerCaps =
      /^.\p{Ll}*\p{Lu}/u.test(surface) || (surface.length > 1 && surface === surface.toUpperCase() && /\p{L}/u.test(surface));
    if (!FUNCTION_WORDS.has(lower) && (innerCaps || (!sentenceStart && /^\p{Lu}/u.test(surface)))) (this.names ??= new Set()).add(lower);
  }

  private push(word: string, code: boolean): void {
    this.words.push(word);
    if (code) (this.codeWords ??= new Set()).add(word);
  }

  info(): TextInfo {
    markRequestFrames(this.words, this.starts);
    const normalised = this.words.join(' ');
    let loose = normalised;
    if (this.kept.length > 0) {
      const kept = new Map(this.kept.map((v) => [v.value.toLowerCase(), placeholder(v.kind)]));
      loose = this.words.map((w) => kept.get(w) ?? w).join(' ');
    }
    let mass = 0;
    for (const w of this.words) mass += wordWeight(w);
    return {
      words: this.words,
      normalised,
      names: this.names ?? NONE,
      capitalised: this.capitalised ?? NONE,
      code: this.codeWords ?? NONE,
      ids: this.ids ?? NONE,
      aside: this.aside,
      kept: this.kept,
      loose,
      mass,
    };
  }
}

/** What one whitespace-separated chunk of prose is. */
function classify(chunk: string, lineStart: boolean, prev: string | undefined, next: string | undefined): Chunk {
  const plain = ASCII_CHUNK.exec(chunk);
  if (plain !== null) return { kind: 'prose', text: chunk, core: plain[1] as string };
  if (chunk.charCodeAt(0) === 0xe000 && MARKER.test(chunk)) return { kind: 'marker', text: chunk };
  if (lineStart && BULLETS.has(chunk)) return { kind: 'drop' };
  if (!/[\p{L}\p{M}\p{N}\uE000]/u.test(chunk)) {
    if (chunk === '-' || chunk === '--') return numeric(prev) || numeric(next) ? { kind: 'operator', text: chunk } : { kind: 'drop' };
    if (chunk === '.' || chunk === '..') return { kind: 'operator', text: chunk };
    if (/^[()[\]]+$/.test(chunk)) return { kind: 'bracket', text: chunk };
    if (PROSE_MARKS.test(chunk)) return { kind: 'drop' };
    return { kind: 'operator', text: chunk };
  }
  const emphasis = chunk.startsWith('*') ? /^(\*{1,3})([^*]+)\1$/.exec(chunk) : null;
  const text = emphasis !== null ? (emphasis[2] as string) : chunk;
  const lead = leading(text, PROSE_LEAD);
  const trail = trailing(text.slice(lead), PROSE_TRAIL);
  const core = text.slice(lead, text.length - trail);
  if (ASCII_WORD.test(core)) return { kind: 'prose', text, core };
  if (core !== '' && (WORD.test(core) || NUMBER.test(core) || ABBREVIATION.test(core))) return { kind: 'prose', text, core };
  return { kind: 'code', text: stripCodeEdges(text) };
}

function stripCodeEdges(text: string): string {
  const rest = text.slice(leading(text, CODE_LEAD));
  const core = rest.slice(0, rest.length - trailing(rest, CODE_EDGE));
  return core === '' ? text : core;
}

/** How many characters at the start of `text` are in `set`. */
function leading(text: string, set: ReadonlySet<string>): number {
  let i = 0;
  while (i < text.length && set.has(text[i] as string)) i++;
  return i;
}

/** How many characters at the end of `text` are in `set`. */
function trailing(text: string, set: ReadonlySet<string>): number {
  let i = text.length;
  while (i > 0 && set.has(text[i - 1] as string)) i--;
  return text.length - i;
}

const numeric = (chunk: string | undefined): boolean => chunk !== undefined && /\p{N}/u.test(chunk);

/**
 * "Can you", "could you", "would you", "will you" opening a sentence (after any greeting) ask for something: the
 * modal becomes `<ask>`, a filler word, so "could you list the files" is "list the files" asked politely and
 * "users must" / "users can" still differ.
 */
function markRequestFrames(words: string[], starts: readonly number[]): void {
  for (const start of starts) {
    let i = start;
    while (i < words.length && FILLER.has(words[i] as string)) i++;
    if (ASK_FRAME.has(words[i] as string) && words[i + 1] === 'you') words[i] = ASK_TOKEN;
  }
}
