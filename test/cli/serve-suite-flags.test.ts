/**
 * `tapedeck serve`'s suite flags as a user runs them: --fault and --seed, --expect (its lines and exit 1), --rerecord,
 * --max-age, --orphans and --prune-orphans, and one clear line for a bad value of each.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirStore } from '../../src/tape/stores/dir-store.js';
import { runCli, serveWhile as serveIn } from '../helpers/cli.js';
import { lastUserText, openaiChat, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

let dir: string;
let upstream: ScriptedUpstream;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-serve-flags-'));
  upstream = await startScriptedUpstream((req) => openaiChat({ content: `echo: ${lastUserText(req.body)}` }));
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const serveWhile = (args: string[], use: (url: string) => Promise<void>): ReturnType<typeof serveIn> => serveIn(dir, args, use);

const ask = async (baseURL: string, content: string): Promise<string> => {
  const openai = new OpenAI({ apiKey: 'sk-cli-SECRET-0123', baseURL, maxRetries: 0 });
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  return answer.choices[0]?.message.content ?? '';
};

describe('tapedeck serve: suite flags', () => {
  it('--fault per tape; --expect fails the run naming each missing call; --rerecord; --max-age; --orphans, --prune-orphans', async () => {
    const route = ['--route', `/openai=${upstream.url}`];
    const first = await serveWhile(
      [...route, '--fault', '{when: {api: openai, call: 2}, then: {status: 429}}', '--seed', '7'],
      async (url) => {
        for (const tape of ['alpha', 'beta']) {
          expect(await ask(`${url}/@${tape}/openai/v1`, `${tape} 1`)).toBe(`echo: ${tape} 1`);
          await expect(ask(`${url}/@${tape}/openai/v1`, `${tape} 2`)).rejects.toThrow(/^429/);
          expect(await ask(`${url}/@${tape}/openai/v1`, `${tape} 3`)).toBe(`echo: ${tape} 3`);
        }
        expect(await ask(`${url}/@gone/openai/v1`, 'gone')).toBe('echo: gone');
      },
    );
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain("this run: fault #1 openai call 2 -> 429 (counted per test's tape)");

    // alpha makes 1 of its recorded calls; beta all; gone is never asked for.
    const second = await serveWhile(['--mode', 'replay', '--expect', 'llm', '--orphans', '--json'], async (url) => {
      await ask(`${url}/@alpha/openai/v1`, 'alpha 1');
      // The recording has its injected 429 (match.kind fault): never served as the upstream's answer. Without the rule
      // that injected it, the call misses, saying why.
      for (const q of ['beta 1', 'beta 2', 'beta 3'])
        await ask(`${url}/@beta/openai/v1`, q).catch((err: Error) =>
          expect(err.message).toMatch(
            /^404 .*is not served: its answer was injected by a fault rule \(#1 openai call 2 -> 429\); record it again/,
          ),
        );
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/alpha\s+replayed 1, missed 0; 1 expected call\(s\) never made/);
    expect(second.stderr).toContain('tapedeck: expected calls (--expect llm): 1 of 2 replayed tape(s) missed some');
    // The injected 429 is no recorded call of the upstream's: alpha's recording has two.
    expect(second.stderr).toContain('tapedeck: alpha: unused recordings  1 of 2 expected recorded call(s) never made');
    expect(second.stderr).toMatch(/tapedeck: {3}step 2 {2}LLM gpt-4o-mini {2}.*alpha 3/);
    expect(second.stderr).toContain('tapedeck: 1 orphan tape(s): no test of this run opened them');
    expect(second.stderr).toMatch(/tapedeck: {3}gone\n/);
    const json = JSON.parse(second.stdout.trim().split('\n').at(-1)!) as {
      tapes: { tape: string; expect?: { missing: unknown[] } }[];
      orphans: string[];
    };
    expect(json.tapes.map((t) => [t.tape, t.expect?.missing.length])).toEqual([
      ['alpha', 1],
      ['beta', 0],
    ]);
    expect(json.orphans).toEqual(['gone']);

    // beta's test re-records (live, overwriting) while alpha replays; an old tape is refused in replay mode.
    const file = path.join(dir, 'alpha.jsonl');
    const [head, ...rest] = readFileSync(file, 'utf8').split('\n');
    writeFileSync(
      file,
      [head!.replace(/"createdAt":"[^"]+"/, `"createdAt":"${new Date(Date.now() - 40 * 86_400_000).toISOString()}"`), ...rest].join('\n'),
    );
    const seen = upstream.requests.length;
    const third = await serveWhile(
      [...route, '--mode', 'replay', '--rerecord', 'bet?', '--max-age', '30d', '--prune-orphans'],
      async (url) => {
        expect(await ask(`${url}/@beta/openai/v1`, 'beta anew')).toBe('echo: beta anew');
        await expect(ask(`${url}/@alpha/openai/v1`, 'alpha 1')).rejects.toThrow(
          /^409 tape "alpha" is 40 days old \(recorded .*\), older than --max-age 30d: re-record it with TAPEDECK_RERECORD='alpha'/,
        );
      },
    );
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).toContain('this run: tests matching "bet?" record their tape afresh');
    expect(third.stderr).toMatch(/beta\s+recorded 1 exchange\(s\) \(afresh: --rerecord\)/);
    expect(third.stderr).toContain('tapedeck: deleted 1 orphan tape(s): no test of this run opened them');
    expect(upstream.requests.length).toBe(seen + 1);
    expect((await createDirStore(dir).names()).sort()).toEqual(['alpha', 'beta']);
    expect((await createDirStore(dir).load('beta')).exchanges).toHaveLength(1);
  });

  it('refuses a bad --max-age, --expect, --rerecord or --seed with one line, exit 2', async () => {
    for (const [args, line] of [
      [['--max-age', 'soon'], 'tapedeck serve: --max-age: bad duration "soon": use a number and a unit s, m, h or d (e.g. 30d, 12h)'],
      [['--expect', ','], 'tapedeck serve: --expect needs all, llm, tools, or tool and model names (comma-separated)'],
      [['--rerecord', '{a'], 'tapedeck serve: --rerecord pattern "{a" opens a { it does not close'],
      [['--seed', '3'], 'tapedeck serve: --seed goes with --faults or --fault'],
    ] as const) {
      const run = await runCli(['serve', '--dir', dir, ...args]);
      expect(run.code).toBe(2);
      expect(run.stderr.trim()).toBe(line);
    }
  });
});
