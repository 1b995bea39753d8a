import { priceTable } from '../config/prices.js';
import { routeSources } from '../config/config.js';
import { renderDriftMarkdown } from '../drift/render-markdown.js';
import { renderDrift, renderNotSent, renderPreflight } from '../drift/render.js';
import { atLeast, runDrift } from '../drift/run-drift.js';
import { parseAllowedHost } from '../drift/key-hosts.js';
import type { Severity } from '../drift/finding.js';
import { TapedeckError } from '../errors.js';
import { createCostFn } from '../inspect/cost.js';
import { styleFor } from '../inspect/format.js';
import { loadSideEffects } from '../replay/side-effects.js';
import { stringList, stringValue, type Command, type ParsedValues } from './shared/command.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './shared/store-options.js';
import { layoutWidth, WIDTH_OPTIONS, WIDTH_USAGE } from './shared/width-options.js';
import { notice } from './shared/notice.js';
import { requiredTape, TAPE_OPTION } from './shared/tape-arg.js';
import { keyOptions } from './shared/serve-options.js';
import { indexKey } from '../engine/tape-session.js';

export const driftCommand: Command = {
  name: 'drift',
  summary: "send a tape's LLM (and safe MCP) calls to the live APIs again and report what changed since it was recorded",
  usage: [
    'tapedeck drift NAME [--sample N] [--route PREFIX=URL]... [--side-effects FILE] [--key ROUTE=VAR]... [--allow-host HOST]...',
    '               [--dry-run]',
    '               [--json | --markdown] [--fail-on breaking|notable|noise] [--refresh [--save-as NAME [--overwrite]]]',
    '               [--min-similarity S] [--cost-ratio R] [--latency-ratio R] [--dir DIR | --store URL] [--width N | --wide]',
    '',
    '  NAME                the tape: a name, a unique prefix, latest, or a path to a .jsonl; --tape NAME says the same',
    '  --sample N          send N of the calls, spread evenly over the tape (MCP session setup added as needed)',
    "  --route PREFIX=URL  send a route's calls to another upstream (repeatable; default: where they were recorded)",
    '  --side-effects FILE a reviewed side-effects file: MCP tools it marks safe are called too (never any other tool)',
    '  --key ROUTE=VAR     the variable holding the key for a route (default: what its SDK reads, OPENAI_API_KEY, ...)',
    "  --allow-host HOST   a key may go to HOST (or HOST:PORT) too; by default only to its provider's own API and to",
    '                      the routes given now (--route, --config): never to another upstream a tape names',
    '  --dry-run           print what would be sent, to which hosts, at what cost, and send nothing',
    '  --json / --markdown the report as JSON / as Markdown for a pull-request comment',
    '  --fail-on LEVEL     exit 1 on drift at least this severe (default breaking)',
    '  --refresh           write the fresh answers as the tape (or as --save-as NAME), the calls not sent as recorded',
    '  --save-as NAME      with --refresh: write them as NAME, leaving the tape as it is',
    '  --overwrite         with --refresh --save-as: replace NAME if it exists',
    '  --min-similarity S  an answer less alike than S (0..1, default 0.5) is notable',
    '  --cost-ratio R      a cost beyond ×R either way is notable (default 1.5)',
    '  --latency-ratio R   a first byte R times later (and 500 ms or more) is notable (default 2)',
    STORE_USAGE,
    WIDTH_USAGE,
    '',
    'Keys come from the environment (a tape holds none). The preflight goes to stderr before anything is sent.',
    'Exit 0: no drift at the --fail-on level; 1: drift at that level (or a failure); 2: bad arguments or a missing key.',
  ].join('\n'),
  options: {
    ...STORE_OPTIONS,
    ...TAPE_OPTION,
    route: { type: 'string', multiple: true },
    sample: { type: 'string' },
    'side-effects': { type: 'string' },
    key: { type: 'string', multiple: true },
    'allow-host': { type: 'string', multiple: true },
    'dry-run': { type: 'boolean' },
    json: { type: 'boolean' },
    markdown: { type: 'boolean' },
    'fail-on': { type: 'string' },
    refresh: { type: 'boolean' },
    'save-as': { type: 'string' },
    overwrite: { type: 'boolean' },
    'min-similarity': { type: 'string' },
    'cost-ratio': { type: 'string' },
    'latency-ratio': { type: 'string' },
    ...WIDTH_OPTIONS,
  },
  allowPositionals: true,
  async run(ctx) {
    const ref = requiredTape(ctx, 'tapedeck drift NAME [flags] (tapedeck drift --help)');
    const v = ctx.values;
    if (v.json === true && v.markdown === true) throw new TapedeckError('BAD_ARGS', '--json and --markdown: pick one');
    const failOn = (stringValue(v, 'fail-on') ?? 'breaking') as Severity;
    if (!['breaking', 'notable', 'noise'].includes(failOn))
      throw new TapedeckError('BAD_ARGS', `--fail-on takes breaking, notable or noise (got "${failOn}")`);
    const sampleText = stringValue(v, 'sample');
    if (sampleText !== undefined && (!/^\d+$/.test(sampleText) || Number(sampleText) < 1))
      throw new TapedeckError('BAD_ARGS', `--sample needs a whole number of calls, 1 or more (got "${sampleText}")`);
    const saveAs = stringValue(v, 'save-as');
    if ((saveAs !== undefined || v.overwrite === true) && v.refresh !== true)
      throw new TapedeckError('BAD_ARGS', '--save-as and --overwrite go with --refresh');
    if (v.refresh === true && sampleText !== undefined)
      throw new TapedeckError('BAD_ARGS', '--refresh writes every call afresh: not with --sample');
    const keys: Record<string, string> = {};
    for (const k of stringList(v, 'key')) {
      const m = /^(\/[^=]*)=([A-Za-z_][A-Za-z0-9_]*)$/.exec(k);
      if (m === null) throw new TapedeckError('BAD_ARGS', `--key needs ROUTE=VAR, like /openai=MY_OPENAI_KEY (got "${k}")`);
      keys[m[1] as string] = m[2] as string;
    }
    const allowHosts = stringList(v, 'allow-host').map((h) => {
      const host = parseAllowedHost(h);
      if (host === undefined) throw new TapedeckError('BAD_ARGS', `--allow-host needs a host or HOST:PORT, like api.groq.com (got "${h}")`);
      return host;
    });
    const thresholds = {
      minSimilarity: ratio(v, 'min-similarity', 0, 1),
      costRatio: ratio(v, 'cost-ratio', 1, Infinity),
      latencyRatio: ratio(v, 'latency-ratio', 1, Infinity),
    };
    const flags = stringList(v, 'route');
    const config = commandConfig(ctx, { routes: flags });
    const sources = routeSources(stringValue(v, 'config'), flags);
    const sideEffectsFile = stringValue(v, 'side-effects') ?? config.sideEffects;
    const width = layoutWidth(ctx);
    const style = styleFor(ctx.stdout, ctx.env);
    const dryRun = v['dry-run'] === true;
    // The refreshed tape is indexed by the key replay matches with (made once: it compiles the secret rules).
    const key = keyOptions(config);
    let preflight: string[] = [];
    const report = await withStore(config, (store) =>
      runDrift({
        store,
        tape: ref,
        routes: sources.chosen,
        fallbackRoutes: sources.defaults,
        ...(sideEffectsFile ? { sideEffects: loadSideEffects(sideEffectsFile) } : {}),
        ...(sampleText !== undefined ? { sample: Number(sampleText) } : {}),
        keys,
        allowHosts,
        env: ctx.env,
        costOf: createCostFn(priceTable(config.prices)),
        thresholds: Object.fromEntries(Object.entries(thresholds).filter(([, x]) => x !== undefined)),
        timeouts: config.timeouts,
        ...(v.refresh === true
          ? {
              refresh: {
                ...(saveAs ? { saveAs } : {}),
                overwrite: v.overwrite === true,
                indexKey: (ex) => indexKey(ex, key),
              },
            }
          : {}),
        redact: config.redact,
        dryRun,
        onPreflight: (plan, tape) => {
          preflight = renderPreflight(plan, tape);
          if (!dryRun) notice(ctx, preflight);
        },
      }),
    );
    if (v.json === true) ctx.stdout.write(JSON.stringify(report, null, 2) + '\n');
    else if (dryRun) ctx.stdout.write([...preflight, ...renderNotSent(report, width, style)].join('\n') + '\n');
    else if (v.markdown === true) ctx.stdout.write(renderDriftMarkdown(report, failOn).join('\n') + '\n');
    else ctx.stdout.write(renderDrift(report, width, style).join('\n') + '\n');
    if (dryRun || report.verdict === 'unchanged' || !atLeast(report.verdict, failOn)) return 0;
    notice(
      ctx,
      `${report.verdict} drift in ${report.counts[report.verdict]} call(s) of "${report.tape}"`,
      report.verdict === 'breaking' ? 'error' : 'warn',
      'tapedeck drift',
    );
    return 1;
  },
};

function ratio(values: ParsedValues, flag: string, min: number, max: number): number | undefined {
  const text = stringValue(values, flag);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < min || n > max)
    throw new TapedeckError(
      'BAD_ARGS',
      `--${flag} needs a number ${max === Infinity ? `of ${min} or more` : `from ${min} to ${max}`}, got "${text}"`,
    );
  return n;
}
