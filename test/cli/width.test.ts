/** Readable timelines: the prompt gets the room, COLUMNS is honoured when piped, --width N and --wide. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffCommand } from '../../src/cli/diff.js';
import { listCommand } from '../../src/cli/list.js';
import { showCommand } from '../../src/cli/show.js';
import { GOAL, recordAgentTapes } from '../inspect/record-agent.js';
import { runCommand } from '../helpers/run-command.js';

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-width-'));
  await recordAgentTapes(dir);
}, 30_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (out: string): string[] => out.trimEnd().split('\n');

describe('show', () => {
  it('at 100 columns (piped, no COLUMNS) a short prompt shows whole, and no line is longer', async () => {
    const { stdout } = await runCommand(showCommand, ['agent', '--dir', dir]);
    expect(stdout).toContain('What time is it in Paris? → ');
    for (const l of lines(stdout)) expect(l.length).toBeLessThanOrEqual(100);
  });

  it('honours COLUMNS when piped, and --width N over it', async () => {
    expect(GOAL.length).toBeGreaterThan(40);
    const wide = await runCommand(showCommand, ['agent', '--dir', dir], { env: { COLUMNS: '160' } });
    expect(wide.stdout).toContain(`${GOAL} → `);
    for (const l of lines(wide.stdout)) expect(l.length).toBeLessThanOrEqual(160);
    expect(Math.max(...lines(wide.stdout).map((l) => l.length))).toBeGreaterThan(100);

    const narrow = await runCommand(showCommand, ['agent', '--dir', dir, '--width', '60'], { env: { COLUMNS: '160' } });
    for (const l of lines(narrow.stdout)) expect(l.length).toBeLessThanOrEqual(60);
  });

  it('--wide cuts nothing: the 70 KB argument is there whole', async () => {
    const { stdout } = await runCommand(showCommand, ['agent', '--dir', dir, '--wide']);
    const failing = lines(stdout).find((l) => l.startsWith('!3'));
    expect(failing?.length).toBeGreaterThan(70_000);
    expect(failing).toMatch(/ 400$/);
    expect(stdout).not.toContain('…');
  });

  it('refuses a width it cannot lay out, and both flags at once', async () => {
    await expect(runCommand(showCommand, ['agent', '--dir', dir, '--width', '20'])).rejects.toMatchObject({ code: 'BAD_ARGS' });
    await expect(runCommand(showCommand, ['agent', '--dir', dir, '--width', 'x'])).rejects.toMatchObject({ code: 'BAD_ARGS' });
    await expect(runCommand(showCommand, ['agent', '--dir', dir, '--width', '80', '--wide'])).rejects.toMatchObject({
      code: 'BAD_ARGS',
    });
  });
});

describe('list and diff', () => {
  it('list fits --width N and COLUMNS, and --wide cuts nothing', async () => {
    const narrow = await runCommand(listCommand, ['--dir', dir, '--width', '50']);
    for (const l of lines(narrow.stdout)) expect(l.length).toBeLessThanOrEqual(50);
    expect(narrow.stdout).toContain('…');
    const env = await runCommand(listCommand, ['--dir', dir], { env: { COLUMNS: '50' } });
    expect(env.stdout).toBe(narrow.stdout);
    const wide = await runCommand(listCommand, ['--dir', dir, '--wide']);
    expect(wide.stdout).not.toContain('…');
    expect(wide.stdout).toContain('replay of agent (on-miss strict): exact 1 · semantic 0 · live 0 · blocked 0 · miss 1');
  });

  it('diff takes --wide and --width', async () => {
    const wide = await runCommand(diffCommand, ['agent', 'agent-replay', '--dir', dir, '--wide']);
    expect(wide.stdout).toContain('get_time({"tz":"Europe/Paris"})');
    expect(wide.stdout).not.toContain('…');
    const narrow = await runCommand(diffCommand, ['agent', 'agent-replay', '--dir', dir, '--width', '40']);
    expect(narrow.stdout).toContain('…');
  });
});
