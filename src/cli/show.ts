import { TapedeckError } from '../errors.js';
import { debrief, renderDebrief } from '../inspect/debrief.js';
import { fit, styleFor } from '../inspect/format.js';
import { inspectTape } from '../inspect/load.js';
import { failingSteps, renderStepState, stepState } from '../inspect/step-state.js';
import { renderTimeline, timelineRow } from '../inspect/timeline.js';
import { stringValue, type Command } from './shared/command.js';
import { commandConfig, STORE_OPTIONS, STORE_USAGE, withStore } from './shared/store-options.js';
import { layoutWidth, WIDTH_OPTIONS, WIDTH_USAGE } from './shared/width-options.js';
import { requiredTape, TAPE_OPTION } from './shared/tape-arg.js';
import { notice } from './shared/notice.js';

export const showCommand: Command = {
  name: 'show',
  summary: 'show a tape: its timeline, the full state at one step, its failing steps, or a decision debrief',
  usage: [
    'tapedeck show NAME [--dir DIR | --store URL] [--namespace NS] [--config FILE] [--json] [--width N | --wide]',
    'tapedeck show NAME --step N          full state at step N (0-based; negative counts from the end: --step -1)',
    'tapedeck show NAME --errors          full state at every failing or blocked step',
    'tapedeck show NAME --debrief         goal, tool calls and the reasons the model gave, assumptions, ending',
    '',
    '  NAME                 the tape: a name, a unique prefix, latest, or a path to a .jsonl; --tape NAME says the same',
    '  --json               print the timeline (or the step, the failing steps, the debrief) as JSON',
    STORE_USAGE,
    WIDTH_USAGE,
  ].join('\n'),
  options: {
    ...STORE_OPTIONS,
    ...TAPE_OPTION,
    json: { type: 'boolean' },
    step: { type: 'string' },
    errors: { type: 'boolean' },
    debrief: { type: 'boolean' },
    ...WIDTH_OPTIONS,
  },
  allowPositionals: true,
  async run(ctx) {
    const given = requiredTape(ctx, 'tapedeck show NAME [--step N | --errors | --debrief] [--json]');
    const stepFlag = stringValue(ctx.values, 'step');
    const modes = [stepFlag !== undefined, ctx.values.errors === true, ctx.values.debrief === true].filter(Boolean).length;
    if (modes > 1) throw new TapedeckError('BAD_ARGS', '--step, --errors and --debrief are exclusive: pick one');
    const { name, tape, steps } = await withStore(commandConfig(ctx), async (store) => {
      const ref = await store.resolve(given);
      // What it resolved to (`latest`, a prefix or a path names a tape): the name is what the output shows.
      return { name: ref.name, ...(await inspectTape(ref.store, ref.name)) };
    });
    const json = ctx.values.json === true;
    const width = layoutWidth(ctx);
    const style = styleFor(ctx.stdout, ctx.env);
    const print = (lines: string[]): void => void ctx.stdout.write(lines.map((l) => l + '\n').join(''));
    const problems = (): void => {
      for (const p of tape.problems) notice(ctx, `${name}: line ${p.line}: ${p.message}`, 'warn', 'tapedeck show');
    };

    if (stepFlag !== undefined) {
      if (!/^-?\d+$/.test(stepFlag))
        throw new TapedeckError('BAD_ARGS', `--step needs an integer (negative counts from the end), got "${stepFlag}"`);
      const state = stepState(steps, Number(stepFlag));
      if (json) ctx.stdout.write(JSON.stringify({ ...state, step: timelineRow(state.step) }, null, 2) + '\n');
      else print(renderStepState(state, width, style));
      problems();
      return 0;
    }
    if (ctx.values.errors === true) {
      const failing = failingSteps(steps).map((s) => stepState(steps, s.index));
      if (json)
        ctx.stdout.write(
          JSON.stringify(
            failing.map((st) => ({ ...st, step: timelineRow(st.step) })),
            null,
            2,
          ) + '\n',
        );
      else if (failing.length === 0) print([`${name}: no failing or blocked steps (${steps.length} steps)`]);
      else
        failing.forEach((st, i) =>
          print([...(i > 0 ? ['', style.dim('─'.repeat(Math.min(width, 60)))] : []), ...renderStepState(st, width, style)]),
        );
      problems();
      return 0;
    }
    if (ctx.values.debrief === true) {
      const d = debrief(steps);
      if (json) ctx.stdout.write(JSON.stringify(d, null, 2) + '\n');
      else print(renderDebrief(d, width, style));
      problems();
      return 0;
    }
    if (json) {
      ctx.stdout.write(
        JSON.stringify({ name, header: tape.header, steps: steps.map((s) => timelineRow(s)), problems: tape.problems }, null, 2) + '\n',
      );
      return 0;
    }
    const h = tape.header;
    print([
      style.bold(
        fit(`${name} · ${h.mode}${h.replayOf ? ` of ${h.replayOf.tape}` : ''} · created ${h.createdAt} · ${steps.length} steps`, width),
      ),
      ...renderTimeline(steps, width, style),
    ]);
    problems();
    return 0;
  },
};
