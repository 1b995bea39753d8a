// The matching evaluation set (bench/matching-set/) against the built matcher: false hits and recall per family, and
// the bound they give (0 false hits in N pairs bounds the rate at 3/N, 95%). Run with `npm run bench:matching` (it
// builds first), or `node bench/matching-eval.mjs` after `npm run build`.
//   --json       the report as JSON
//   --wrong N    list up to N pairs that went wrong (default 20)
//   --family F   only the families whose name contains F
// Exits 1 when a pair that means something different was served, or a promised rewording was not.
import { fileURLToPath } from 'node:url';
import { evaluate, matchingSet, reportLines } from './matching-set/index.mjs';

export async function run(argv = []) {
  const { createReplayMatcher } = await import('../dist/replay/pipeline.js');
  const flag = (name) => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : (argv[i + 1] ?? '');
  };
  const family = flag('--family');
  const pairs = matchingSet().filter((p) => family === undefined || p.family.includes(family));
  const t0 = performance.now();
  const report = await evaluate(pairs, createReplayMatcher);
  const seconds = (performance.now() - t0) / 1000;
  if (argv.includes('--json')) {
    console.log(
      JSON.stringify(
        { ...report, wrong: report.wrong.map((w) => ({ ...w, pair: { ...w.pair, recorded: undefined, incoming: undefined } })) },
        null,
        2,
      ),
    );
  } else {
    console.log(`\nmatching evaluation set (${pairs.length} pairs, ${seconds.toFixed(1)} s)`);
    for (const line of reportLines(report)) console.log(line);
    const limit = Number(flag('--wrong') ?? 20);
    for (const w of report.wrong.slice(0, limit))
      console.log(`  ${w.pair.side} ${w.pair.family} (${w.pair.api}, ${w.pair.lang}): ${w.pair.note}: ${w.outcome}: ${w.why}`);
  }
  return report.adversarial.falseHits + report.benign.falseHits === 0 && report.benign.served === report.benign.pairs;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = (await run(process.argv.slice(2))) ? 0 : 1;
