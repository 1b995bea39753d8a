/**
 * The configurations of an experiment: one per combination of the values given for each override (the cartesian
 * product: two models and two temperatures are four configurations), each with a label for the table.
 */
import type { OverrideInputs } from '../replay/override-targets.js';

/** The values to try per field, each `VALUE` or `{route, value}` as the replay flags take them. */
export type ExperimentAxes = OverrideInputs;

export interface ExperimentConfig {
  /** `model gpt-4.1, temperature 0`; `as recorded (re-asked)` when nothing is overridden. */
  label: string;
  overrides: OverrideInputs;
}

const LABELS: Record<keyof OverrideInputs, string> = {
  model: 'model',
  temperature: 'temperature',
  maxTokens: 'max tokens',
  systemPrompt: 'system prompt',
};

export function combinations(axes: ExperimentAxes): ExperimentConfig[] {
  let out: ExperimentConfig[] = [{ label: '', overrides: {} }];
  for (const field of ['model', 'temperature', 'maxTokens', 'systemPrompt'] as const) {
    const values = axes[field] ?? [];
    if (values.length === 0) continue;
    const shown = field === 'systemPrompt' ? proseLabels(values) : values.map((v) => show(v, (x) => String(x)));
    const next: ExperimentConfig[] = [];
    for (const c of out)
      values.forEach((v, k) =>
        next.push({
          label: [c.label, `${LABELS[field]} ${shown[k]}`].filter((x) => x !== '').join(', '),
          overrides: { ...c.overrides, [field]: [v] },
        }),
      );
    out = next;
  }
  return out.map((c) => (c.label === '' ? { ...c, label: 'as recorded (re-asked)' } : c));
}

function show(v: unknown, text: (value: unknown) => string): string {
  if (typeof v === 'object' && v !== null) {
    const t = v as { route: string; value: unknown };
    return `${t.route}=${text(t.value)}`;
  }
  return text(v);
}

/** Shortest: a prompt is shown by its first 24 characters... */
const PROSE_MIN = 24;
/** ...and by more when two prompts start alike, up to this; beyond it they are told apart by their place (`#2`). */
const PROSE_MAX = 60;

/**
 * Prompts in short, never cut into ambiguity: each is shown by as much of its start as tells it from the others
 * (24 characters at least), and prompts alike for longer than 60 characters get their place on the command line.
 */
function proseLabels(values: readonly unknown[]): string[] {
  const route = (v: unknown): string => (typeof v === 'object' && v !== null ? `${(v as { route: string }).route}=` : '');
  const value = (v: unknown): unknown => (typeof v === 'object' && v !== null ? (v as { value: unknown }).value : v);
  const prose = values.map((v) => String(value(v)).replace(/\s+/g, ' ').trim());
  const whole = (i: number): string => JSON.stringify([route(values[i]), prose[i]]);
  const cut = (t: string, n: number): string => (t.length > n ? `${t.slice(0, n - 3)}...` : t);
  const key = (i: number, n: number): string => JSON.stringify([route(values[i]), cut(prose[i] as string, n)]);
  const distinct = new Set(values.map((_, i) => whole(i))).size;
  let n = PROSE_MIN;
  while (n < PROSE_MAX && new Set(values.map((_, i) => key(i, n))).size < distinct) n++;
  return values.map((v, i) => {
    const clash = values.some((_, j) => j !== i && key(j, n) === key(i, n) && whole(j) !== whole(i));
    return `${clash ? `#${i + 1} ` : ''}${route(v)}${JSON.stringify(cut(prose[i] as string, n))}`;
  });
}
