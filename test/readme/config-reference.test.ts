/**
 * The configuration file as docs/recording-and-replay.md shows it ("Every setting"): the example is a valid config
 * file, and names every top-level setting the config schema has (a setting shown commented out counts), so a new
 * setting cannot go undocumented.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigSchema } from '../../src/config/config.js';

const PAGE = path.resolve(import.meta.dirname, '../../docs/recording-and-replay.md');

/** The first ```yaml block of the page's "## Configuration" section. */
function example(): string {
  const page = readFileSync(PAGE, 'utf8');
  const section = page.slice(page.indexOf('\n## Configuration\n'));
  const block = /\n```yaml\n([\s\S]*?)\n```\n/.exec(section);
  if (block === null) throw new Error('docs/recording-and-replay.md: no ```yaml block under "## Configuration"');
  return block[1] as string;
}

describe('the configuration file on docs/recording-and-replay.md', () => {
  it('is a valid config file', () => {
    const parsed = ConfigSchema.safeParse(parse(example()));
    expect(parsed.error?.issues ?? []).toEqual([]);
  });

  it('names every setting', () => {
    const text = example();
    const missing = Object.keys(ConfigSchema.shape).filter((key) => !new RegExp(`^(# )?${key}:`, 'm').test(text));
    expect(missing).toEqual([]);
  });
});
