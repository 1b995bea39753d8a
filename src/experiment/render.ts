/** An experiment as one table: per run, its configuration, score, ARS, first divergence, tool edits and deltas. */
import { divergenceAt } from '../inspect/diff/diff.js';
import { fit, formatCost, formatMs, wrapText, type Style } from '../inspect/format.js';
import type { ExperimentResult } from './run-experiment.js';

const FIRST = 'first divergence';

/**
 * The table, laid out for `width` columns (Infinity: no limit). Configuration labels are never cut: when the longest
 * does not fit beside the numbers, the table names configurations `config N` and lists each label whole below it.
 */
export function renderExperiment(r: ExperimentResult, width: number, style: Style): string[] {
  const repeats = r.runs.some((x) => x.repeat > 1);
  const firsts = r.runs.map((run) =>
    run.diff?.firstDivergence ? divergenceAt(run.diff.firstDivergence, 'original', 'run') : run.diff ? 'none' : '',
  );
  // The rows' own first divergence (`step 3`), not the column's heading, which may be cut.
  const firstWidth = Math.max(4, ...firsts.map((f) => f.length));
  const fixed = 2 + 4 + 1 + 5 + 1 + 5 + 1 + 5 + 1 + 7 + 1 + 10 + 1 + 9 + 2 + firstWidth;
  const full = (label: string, repeat: number): string => (repeats ? `${label} #${repeat}` : label);
  const longest = Math.max(13, ...r.runs.map((x) => full(x.label, x.repeat).length));
  const legend = fixed + longest > width;
  const name = (config: number, label: string): string => (legend ? `config ${config}` : label);
  const label = Math.max(13, ...r.runs.map((x) => full(name(x.config, x.label), x.repeat).length));

  const head =
    `  ${'#'.padEnd(4)}${'configuration'.padEnd(label)} ${'score'.padStart(5)} ${'ARS'.padStart(5)} ${'edits'.padStart(5)} ` +
    `${'tokens'.padStart(7)} ${'cost'.padStart(10)} ${'duration'.padStart(9)}  ${fixed - firstWidth + label + FIRST.length > width ? 'diverges' : FIRST}`;
  const out = [
    style.bold(`experiment on "${r.tape}": ${r.configs.length} configuration(s), ${r.runs.length} run(s)`),
    '',
    style.dim(fit(head, width)),
  ];
  r.runs.forEach((run, i) => {
    const cell = full(name(run.config, run.label), run.repeat).padEnd(label);
    const d = run.diff;
    const n = `${i + 1}`.padEnd(4);
    if (d === null) {
      out.push(style.red(`  ${n}${cell} FAILED`), ...wrap(run.failed ?? '?', width).map(style.red));
      return;
    }
    const line =
      `  ${n}${cell} ${d.score.toFixed(2).padStart(5)} ${d.ars.score.toFixed(2).padStart(5)} ` +
      `${String(d.toolSequenceDiff.length).padStart(5)} ${signed(d.tokensDelta).padStart(7)} ` +
      `${(d.costDelta === null ? '?' : signed(d.costDelta, formatCost)).padStart(10)} ${signed(d.durationDeltaMs, (x) => formatMs(x)).padStart(9)}  `;
    if (run.failed !== null) {
      out.push(style.red(`${line}FAILED`), ...wrap(run.failed, width).map(style.red));
      return;
    }
    out.push(line + (firsts[i] as string));
    if (d.firstDivergence !== null) out.push(...wrap(d.firstDivergence.reason, width).map(style.dim));
    for (const b of run.blocked) out.push(...wrap(`⊘ blocked at step ${b.step}: ${b.tool} (${b.reason})`, width).map(style.yellow));
  });
  if (legend) {
    out.push('', style.bold('configurations'));
    for (const [i, c] of r.configs.entries()) out.push(`  config ${i + 1}: ${c.label}`);
  }
  if (repeats) {
    out.push('', style.bold('run-to-run variance (same configuration)'));
    for (const v of r.variance) {
      const s = v.score;
      out.push(
        `  ${name(v.config, v.label)}: ` +
          fit(
            `${v.runs} run(s)${v.failed > 0 ? `, ${v.failed} failed` : ''}; ` +
              (s === null
                ? 'no score'
                : `score ${s.min.toFixed(2)}..${s.max.toFixed(2)} (mean ${s.mean.toFixed(2)}, sd ${s.stdev.toFixed(2)}); ` +
                  `${v.toolSequences} distinct tool sequence(s)`),
            Math.max(20, width - name(v.config, v.label).length - 4),
          ),
      );
    }
  }
  out.push('', style.dim(`deltas are the run minus the original "${r.tape}"; each run is saved as a tape (tapedeck diff ${r.tape} NAME)`));
  for (const [i, run] of r.runs.entries()) if (run.tape !== null) out.push(style.dim(`  ${i + 1}: ${run.tape}`));
  return out;
}

/** Why a run failed, where it diverged, what it had blocked: indented under its row and wrapped at spaces, never cut. */
function wrap(text: string, width: number): string[] {
  return wrapText(text, width, '      ');
}

function signed(n: number, format: (x: number) => string = String): string {
  if (n === 0) return format(0);
  return n > 0 ? `+${format(n)}` : `-${format(-n)}`;
}
