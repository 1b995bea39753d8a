import { isTapedeckError, TapedeckError } from '../errors.js';
import { embeddingSimilarity } from '../inspect/diff/embedding-similarity.js';
import type { OutputSimilarity } from '../inspect/diff/similarity.js';
import { pairedOutputs } from '../inspect/diff/step-deltas.js';
import { priceTable } from '../config/prices.js';
import { createCostFn } from '../inspect/cost.js';
import { diffRuns, divergenceAt, runOf } from '../inspect/diff/diff.js';
import { renderDiff } from '../inspect/diff/diff-summary.js';
import { renderDiffMarkdown } from '../inspect/diff/diff-markdown.js';
import { styleFor } from '../inspect/format.js';
import { stringValue, type Command } from './shared/command.js';
import { commandConfig, loadTapeRef, STORE_OPTIONS, STORE_USAGE } from './shared/store-options.js';
import { layoutWidth, WIDTH_OPTIONS, WIDTH_USAGE } from './shared/width-options.js';
import { notice } from './shared/notice.js';

export const diffCommand: Command = {
  name: 'diff',
  summary: 'compare two tapes (a run and its replay): tool-call edits, first divergence, output, deltas, score',
  usage: [
    'tapedeck diff A B [--dir DIR | --store URL] [--json | --markdown] [--fail-on divergence] [--min-score S] [--min-ars S]',
    '                  [--width N | --wide]',
    '',
    '  A B                    the two tapes (a run and its replay): names, unique prefixes, latest, or paths to .jsonl files',
    '  --json                 print the diff as JSON (identical, iterationsDelta, toolSequenceDiff, firstDivergence,',
    '                         outputDiff, tokensDelta, tokensDeltaDetail, costDelta, durationDeltaMs, score, ars,',
    '                         configChanges, steps, unusedRecordings; see docs/compare-and-ci.md)',
    '  --markdown             print the diff as Markdown for a pull-request comment (verdict, table, details folded)',
    '  --fail-on divergence   exit 1 when the runs are not identical (the CI gate; drift takes --fail-on LEVEL)',
    '  --min-score S          exit 1 when the score (0..1) is below S',
    '  --min-ars S            exit 1 when the Agent Regression Score (0..1) is below S',
    STORE_USAGE,
    WIDTH_USAGE,
  ].join('\n'),
  options: {
    ...STORE_OPTIONS,
    json: { type: 'boolean' },
    'fail-on': { type: 'string' },
    'min-score': { type: 'string' },
    'min-ars': { type: 'string' },
    markdown: { type: 'boolean' },
    ...WIDTH_OPTIONS,
  },
  deprecated: {
    'fail-on-divergence': {
      option: { type: 'boolean' },
      instead: '--fail-on divergence',
      fold: (values) => void (values['fail-on'] = 'divergence'),
    },
  },
  allowPositionals: true,
  async run(ctx) {
    const [nameA, nameB, ...extra] = ctx.positionals;
    if (nameA === undefined || nameB === undefined || extra.length > 0)
      throw new TapedeckError(
        'BAD_ARGS',
        'usage: tapedeck diff A B [--json | --markdown] [--fail-on divergence] [--min-score S] [--min-ars S]',
      );
    const failOn = stringValue(ctx.values, 'fail-on');
    if (failOn !== undefined && failOn !== 'divergence')
      throw new TapedeckError('BAD_ARGS', `--fail-on takes divergence for diff (got "${failOn}"): exit 1 when the runs are not identical`);
    if (ctx.values.json === true && ctx.values.markdown === true) throw new TapedeckError('BAD_ARGS', '--json and --markdown: pick one');
    const minScore = unitFlag(stringValue(ctx.values, 'min-score'), '--min-score');
    const minArs = unitFlag(stringValue(ctx.values, 'min-ars'), '--min-ars');
    const config = commandConfig(ctx);
    const costOf = createCostFn(priceTable(config.prices));
    const a = runOf(await loadTapeRef(config, nameA));
    const b = runOf(await loadTapeRef(config, nameB));
    let similarity: OutputSimilarity | undefined;
    const embeddings = config.match.semantic.embeddings;
    if (embeddings !== undefined) {
      try {
        similarity = await embeddingSimilarity(pairedOutputs(a, b), embeddings);
      } catch (err) {
        if (!isTapedeckError(err) || err.code !== 'EMBEDDINGS_FAILED') throw err;
        notice(ctx, `${err.message}; output similarity uses the word method`, 'warn', 'tapedeck diff');
      }
    }
    const diff = diffRuns(a, b, { costOf, ...(similarity ? { similarity } : {}) });

    // The gates, each failed one as one line (stderr) and in the Markdown verdict.
    const failed: string[] = [];
    if (failOn === 'divergence' && !diff.identical)
      failed.push(
        `${nameB} diverges from ${nameA}${diff.firstDivergence ? ` at ${divergenceAt(diff.firstDivergence, nameA, nameB)}: ${diff.firstDivergence.reason}` : ''}`,
      );
    if (minScore !== undefined && diff.score < minScore) failed.push(`score ${diff.score} is below --min-score ${minScore}`);
    if (minArs !== undefined && diff.ars.score < minArs) failed.push(`ARS ${diff.ars.score} is below --min-ars ${minArs}`);

    if (ctx.values.json === true) ctx.stdout.write(JSON.stringify(diff, null, 2) + '\n');
    else if (ctx.values.markdown === true) ctx.stdout.write(renderDiffMarkdown(a, b, diff, { costOf, failed }).join('\n') + '\n');
    else
      ctx.stdout.write(
        renderDiff(a, b, diff, layoutWidth(ctx), styleFor(ctx.stdout, ctx.env))
          .map((l) => l + '\n')
          .join(''),
      );
    for (const [run, name] of [
      [a, nameA],
      [b, nameB],
    ] as const)
      for (const p of run.tape.problems) notice(ctx, `${name}: line ${p.line}: ${p.message}`, 'warn', 'tapedeck diff');

    notice(ctx, failed, 'error', 'tapedeck diff');
    return failed.length > 0 ? 1 : 0;
  },
};

/** A gate's threshold: a number from 0 to 1, or undefined when the flag is absent. */
function unitFlag(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new TapedeckError('BAD_ARGS', `${flag} needs a number from 0 to 1, got "${text}"`);
  return n;
}
