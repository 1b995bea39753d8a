/**
 * docs/cli.md, the command reference, against the commands themselves: a section per command (`## \`tapedeck
 * NAME\``, in `tapedeck --help`'s order), each with the block after `<!-- help: NAME -->` exactly what `tapedeck NAME
 * --help` prints, and every flag the command accepts named in its section (in the help, or in the notes under it
 * where the help leaves one out), so that a flag cannot go undocumented nor a page repeat a help text that changed.
 * After a change to a command's help: `UPDATE_CLI_DOCS=1 npx vitest run test/readme/cli-reference.test.ts` writes
 * the new help into the page (the notes stay as written).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const PAGE = path.resolve(import.meta.dirname, '../../docs/cli.md');
const UPDATE = process.env.UPDATE_CLI_DOCS === '1';

/** What `tapedeck NAME --help` prints, without its last newline. */
async function helpOf(name: string): Promise<string> {
  const { code, stdout } = await runCliInProcess([name, '--help']);
  expect(code, `tapedeck ${name} --help`).toBe(0);
  return stdout.replace(/\n$/, '');
}

/** The page's sections by command: `## \`tapedeck NAME\`` up to the next `## `. */
function sections(page: string): Map<string, string> {
  const out = new Map<string, string>();
  const parts = page.split(/^(?=## )/m);
  for (const part of parts) {
    const m = /^## `tapedeck ([\w-]+)`\n/.exec(part);
    if (m) out.set(m[1] as string, part);
  }
  return out;
}

/** The help block of a section: the fenced block right after `<!-- help: NAME -->`. */
const HELP_BLOCK = (name: string): RegExp => new RegExp(`(<!-- help: ${name} -->\\n\`\`\`text\\n)([\\s\\S]*?)(\\n\`\`\`\\n)`);

describe('docs/cli.md, the command reference', () => {
  it('has a section per command, in the order tapedeck --help lists them', () => {
    expect([...sections(readFileSync(PAGE, 'utf8')).keys()]).toEqual(COMMANDS.map((c) => c.name));
  });

  it("shows each command's --help exactly as the command prints it", async () => {
    let page = readFileSync(PAGE, 'utf8');
    const stale: string[] = [];
    for (const { name } of COMMANDS) {
      const help = await helpOf(name);
      const block = HELP_BLOCK(name).exec(page);
      if (block === null) throw new Error(`docs/cli.md: no <!-- help: ${name} --> block followed by a \`\`\`text block`);
      if (block[2] === help) continue;
      stale.push(name);
      if (UPDATE) page = page.replace(HELP_BLOCK(name), (_all, open: string, _old: string, close: string) => open + help + close);
    }
    if (UPDATE) writeFileSync(PAGE, page);
    else expect(stale, 'help blocks that differ from --help (UPDATE_CLI_DOCS=1 rewrites them)').toEqual([]);
  });

  it('names every flag a command accepts in its section', async () => {
    const page = sections(readFileSync(PAGE, 'utf8'));
    const undocumented: string[] = [];
    for (const entry of COMMANDS) {
      const command = await entry.load();
      const text = page.get(entry.name) ?? '';
      for (const flag of Object.keys(command.options))
        if (!new RegExp(`--${flag}(?![\\w-])`).test(text)) undocumented.push(`${entry.name} --${flag}`);
    }
    expect(undocumented).toEqual([]);
  });
});
