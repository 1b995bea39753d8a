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
    const next: ExperimentConfig[] = [];
    for (const c of out)
      for (const v of values)
        next.push({
          label: [c.label, `${LABELS[field]} ${show(v, field === 'systemPrompt')}`].filter((x) => x !== '').join(', '),
          overrides: { ...c.overrides, [field]: [v] },
        });
    out = next;
  }
  return out.map((c) => (c.label === '' ? { ...c, label: 'as recorded (re-asked)' } : c));
}

function show(v: unknown, prose: boolean): string {
  if (typeof v === 'object' && v !== null) {
    const t = v as { route: string; value: unknown };
    return `${t.route}=${show(t.value, prose)}`;
  }
  const text = String(v);
  if (!prose) return text;
  const one = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > 24 ? `${one.slice(0, 21)}...` : one);
}
