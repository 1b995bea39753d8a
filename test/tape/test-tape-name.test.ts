import { describe, expect, it } from 'vitest';
import { validateTapeName } from '../../src/tape/paths.js';
import { earlierTapeNameForTest, tapeNameForTest, testNamePart } from '../../src/tape/test-tape-name.js';

const tape = (file: string, ...names: string[]): string => tapeNameForTest({ file, names });

describe('the tape of a test', () => {
  it('keeps the name a test always had when its parts lost nothing but spaces', () => {
    const cases: [string, string[], string][] = [
      ['tests/agent.test.ts', ['weather', 'answers in celsius'], 'tests/agent/weather/answers-in-celsius'],
      ['tests/test_agent.py', ['TestWeather', 'test_celsius'], 'tests/test_agent/TestWeather/test_celsius'],
      ['src/a.spec.mjs', ['v1.2_ok-done'], 'src/a/v1.2_ok-done'],
      ['./../x.ts', ['y'], 'x/y'],
    ];
    for (const [file, names, expected] of cases) {
      expect(tape(file, ...names)).toBe(expected);
      expect(earlierTapeNameForTest({ file, names })).toBe(expected);
    }
  });

  it('gives tests whose slugs are the same distinct tapes: a hash of each part that lost characters', () => {
    const plus = tape('tests/test_x.py', 'test_calc[1+1]');
    const minus = tape('tests/test_x.py', 'test_calc[1-1]');
    expect(plus).toMatch(/^tests\/test_x\/test_calc-1-1-[0-9a-f]{8}$/);
    expect(minus).toMatch(/^tests\/test_x\/test_calc-1-1-[0-9a-f]{8}$/);
    expect(plus).not.toBe(minus);
    // Under the earlier rule both were one tape.
    expect(earlierTapeNameForTest({ file: 'tests/test_x.py', names: ['test_calc[1+1]'] })).toBe('tests/test_x/test_calc-1-1');
    expect(earlierTapeNameForTest({ file: 'tests/test_x.py', names: ['test_calc[1-1]'] })).toBe('tests/test_x/test_calc-1-1');
    // Same test, same tape, every time.
    expect(tape('tests/test_x.py', 'test_calc[1+1]')).toBe(plus);
  });

  it('keeps letters of any script: 東京の天気 and 大阪の天気 are two readable tapes', () => {
    expect(tape('tests/weather.test.ts', '天気', '東京の天気')).toBe('tests/weather/天気/東京の天気');
    expect(tape('tests/weather.test.ts', '天気', '大阪の天気')).toBe('tests/weather/天気/大阪の天気');
    expect(tape('t.test.ts', 'Ünïcödé naïve café')).toBe('t/Ünïcödé-naïve-café');
    expect(earlierTapeNameForTest({ file: 'tests/weather.test.ts', names: ['天気', '東京の天気'] })).toBe('tests/weather/_/_');
    // The same letters decomposed (NFD) are another name: a hash says so.
    expect(testNamePart('cafe\u0301')).toMatch(/^café-[0-9a-f]{8}$/);
  });

  it('hashes what would not be a tape of its own: dots, reserved endings, separators, nothing left', () => {
    for (const text of ['..', '.', '.hidden', 'x.jsonl', 'x.files', 'a/b', 'a\\b', '!!!', '', ' lead', 'a  b', 'a--b', 'x-'])
      expect(testNamePart(text), text).toMatch(/-[0-9a-f]{8}$/);
    expect(testNamePart('..')).toMatch(/^_-[0-9a-f]{8}$/);
    expect(testNamePart('x.jsonl')).toMatch(/^x\.jsonl-[0-9a-f]{8}$/);
  });

  it('cuts a long part to fit a file name (200 bytes, UTF-8), with its hash', () => {
    const ascii = testNamePart('a'.repeat(300));
    expect(ascii).toMatch(/^a{191}-[0-9a-f]{8}$/);
    const cjk = testNamePart('天'.repeat(100));
    expect(Buffer.byteLength(cjk)).toBeLessThanOrEqual(200);
    expect(cjk).toMatch(/^天+-[0-9a-f]{8}$/);
    expect(testNamePart('a'.repeat(200))).toBe('a'.repeat(200));
  });

  it('always makes a valid tape name, unchanged by the store', () => {
    const nasty = ['..', '...jsonl', '.jsonl', '%2F..', 'a/../b', 'C:\\x', '\u0000', '😀 emoji', '  ', '-', 'x.replay-1', '東'.repeat(80)];
    for (const text of nasty) {
      const name = tape('tests/../a.test.ts', 'suite', text);
      expect(validateTapeName(name), JSON.stringify(text)).toBe(name);
    }
  });
});
