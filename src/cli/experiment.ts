import { TapedeckError } from '../errors.js';
import { renderExperiment } from '../experiment/render.js';
import { renderExperimentMarkdown } from '../experiment/render-markdown.js';
import { runExperiment } from '../experiment/run-experiment.js';
import { styleFor } from '../inspect/format.js';
import { createLogger } from '../log.js';
import { loadSideEffects } from '../replay/side-effects.js';
import { routeSources } from '../config/config.js';
import { stringList, stringValue, type Command } from './shared/command.js';
import { parseOverrides } from './replay.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './shared/store-options.js';
import { notice } from './shared/notice.js';
import { requiredTape, TAPE_OPTION } from './shared/tape-arg.js';
import { layoutWidth, WIDTH_OPTIONS } from './shared/width-options.js';

export const experimentCommand: Command = {
  name: 'experiment',
  summary: 'A/B a recorded run: replay the agent once per configuration (models, temperatures, prompts), diff each run',
  usage: [
    'tapedeck experiment NAME --model A --model B [--temperature T]... [--system-prompt TEXT|@FILE]...',
    '                    [--max-tokens N]... [--live-route ROUTE]... [--repeat N] [--side-effects FILE] [--json | --markdown]',
    '                    [--width N | --wide] [--dir DIR | --store URL] [--namespace NS] [--config FILE]',
    '                    [--route PREFIX=URL]... [--verbose] -- COMMAND ARGS...',
    '',
    '  NAME                the recorded run (a name, a unique prefix, latest, or a path to a .jsonl); --tape NAME says',
    '                      the same',
    '  --model M           a model to try (repeatable; [ROUTE=]M as for replay): one configuration per combination',
    '  --temperature T     of all the values given; --system-prompt, --max-tokens likewise',
    '  --live-route ROUTE  only LLM calls on ROUTE go live, as for replay',
    '  --repeat N          run each configuration N times, to tell a real change from run-to-run noise',
    '  --side-effects FILE a reviewed side-effects file, as for replay',
    '  --json              print the results as JSON (configs, runs with their diffs, variance)',
    '  --markdown          print the results as Markdown for a pull-request comment (verdict, table, details folded)',
    '  --width N / --wide  lay out the table for N columns / cut no line (default: the terminal, else COLUMNS, else 100)',
    '  -- COMMAND ARGS     the agent, run with OPENAI_BASE_URL, ANTHROPIC_BASE_URL, ... pointing at each replay',
    '  --route PREFIX=URL  where live calls go, as for replay (default: where they were recorded)',
    '  --verbose           structured logs on stderr',
    STORE_USAGE,
    '',
    "The agent's own output goes to stderr. Each run is saved as a tape NAME.exp-TIMESTAMP-N beside the original.",
  ].join('\n'),
  options: {
    ...TAPE_OPTION,
    ...STORE_OPTIONS,
    route: { type: 'string', multiple: true },
    model: { type: 'string', multiple: true },
    'system-prompt': { type: 'string', multiple: true },
    temperature: { type: 'string', multiple: true },
    'max-tokens': { type: 'string', multiple: true },
    'live-route': { type: 'string', multiple: true },
    repeat: { type: 'string' },
    'side-effects': { type: 'string' },
    json: { type: 'boolean' },
    markdown: { type: 'boolean' },
    verbose: { type: 'boolean' },
    ...WIDTH_OPTIONS,
  },
  allowPositionals: true,
  async run(ctx) {
    const name = requiredTape(ctx, 'tapedeck experiment NAME --model A --model B ... -- COMMAND ARGS...');
    const width = layoutWidth(ctx);
    if (ctx.values.json === true && ctx.values.markdown === true) throw new TapedeckError('BAD_ARGS', '--json and --markdown: pick one');
    const [command, ...args] = ctx.rest;
    if (command === undefined)
      throw new TapedeckError('BAD_ARGS', 'the agent to run goes after --: tapedeck experiment NAME ... -- COMMAND ARGS...');
    const repeatText = stringValue(ctx.values, 'repeat') ?? '1';
    if (!/^\d+$/.test(repeatText) || Number(repeatText) < 1 || Number(repeatText) > 100)
      throw new TapedeckError('BAD_ARGS', `--repeat must be a whole number from 1 to 100 (got "${repeatText}")`);
    const liveRoutes = stringList(ctx.values, 'live-route');
    for (const r of liveRoutes)
      if (!r.startsWith('/')) throw new TapedeckError('BAD_ARGS', `--live-route needs a route prefix such as /openai (got "${r}")`);
    const axes = parseOverrides(ctx.values, 'live');
    const file = stringValue(ctx.values, 'config');
    const flags = stringList(ctx.values, 'route');
    const config = commandConfig(ctx, { routes: flags });
    const sources = routeSources(file, flags);
    const sideEffectsFile = stringValue(ctx.values, 'side-effects');
    const log = createLogger(ctx.values.verbose === true ? 'debug' : (ctx.env.TAPEDECK_LOG ?? 'warn'));
    const result = await withStore(config, async (store) => {
      const ref = await store.resolve(name);
      return runExperiment({
        store: ref.store,
        tape: ref.name,
        config,
        axes,
        ...(liveRoutes.length > 0 ? { liveRoutes } : {}),
        repeat: Number(repeatText),
        command,
        args,
        env: ctx.env,
        // The agent's stdout and stderr go to ours: stdout stays the table (or the JSON).
        stdio: ['ignore', 2, 2],
        routes: sources.chosen,
        fallbackRoutes: sources.defaults,
        ...(sideEffectsFile ? { sideEffects: loadSideEffects(sideEffectsFile) } : {}),
        log,
        onRun: (run) =>
          notice(
            ctx,
            `run ${run.config}.${run.repeat} (${run.label}): ${run.failed ?? 'done'}${run.tape ? `, saved as "${run.tape}"` : ''}`,
            run.failed === null ? 'plain' : 'error',
          ),
      });
    });
    log.flush();
    if (ctx.values.json === true) ctx.stdout.write(JSON.stringify(result, null, 2) + '\n');
    else if (ctx.values.markdown === true) ctx.stdout.write(renderExperimentMarkdown(result).join('\n') + '\n');
    else ctx.stdout.write(renderExperiment(result, width, styleFor(ctx.stdout, ctx.env)).join('\n') + '\n');
    return result.runs.some((r) => r.failed !== null) ? 1 : 0;
  },
};
