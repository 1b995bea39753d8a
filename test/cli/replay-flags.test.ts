import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseOverrides } from '../../src/cli/replay.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('--system-prompt @FILE', () => {
  const prompt = (text: string): unknown => {
    const file = path.join(dir, `p-${Math.random().toString(36).slice(2)}.txt`);
    writeFileSync(file, text);
    return parseOverrides({ 'system-prompt': [`@${file}`] }, 'live').systemPrompt;
  };

  it('drops the one trailing newline an editor ends a file with (as $(cat FILE) would), and keeps the rest', () => {
    expect(prompt('Be terse.\n')).toEqual(['Be terse.']);
    expect(prompt('Be terse.\r\n')).toEqual(['Be terse.']);
    expect(prompt('Be terse.')).toEqual(['Be terse.']);
    // Only one: a blank line the author left on purpose stays, and so does every newline inside.
    expect(prompt('Line one.\nLine two.\n\n')).toEqual(['Line one.\nLine two.\n']);
  });

  it('reads a targeted @FILE the same way', () => {
    const file = path.join(dir, 'targeted.txt');
    writeFileSync(file, 'Answer in French.\n');
    expect(parseOverrides({ 'system-prompt': [`/openai=@${file}`] }, 'live').systemPrompt).toEqual([
      { route: '/openai', value: 'Answer in French.' },
    ]);
  });
});
