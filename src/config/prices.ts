/**
 * The price table: per model, USD per million input, cached-input and output tokens. `config/prices.yaml` is the
 * built-in table; a user's prices (a file, or an inline map in the config) are merged over it model by model.
 * Lookups try the model as named, then without vendor prefix and snapshot suffixes. An unknown model has no price.
 */
import { parseYamlText, readYamlFile } from './yaml-file.js';
import { z } from 'zod';
import { shippedPlace, shippedText } from '../shipped.js';

export const ModelPriceSchema = z
  .object({
    /** USD per million input tokens. */
    input: z.number().nonnegative(),
    /** USD per million output tokens. */
    output: z.number().nonnegative(),
    /** USD per million input tokens served from the provider's prompt cache; absent: priced as input. */
    cachedInput: z.number().nonnegative().optional(),
  })
  .strict();
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** Model name -> price. */
export const PriceMapSchema = z.record(z.string(), ModelPriceSchema);
export type PriceMap = z.infer<typeof PriceMapSchema>;

/** Provider -> the model families it serves: `claude-` (a prefix, ends in `-`) or `o3` (that model and `o3-...`). */
export const FamilyMapSchema = z.record(z.string(), z.array(z.string().min(1)));
export type FamilyMap = z.infer<typeof FamilyMapSchema>;

/** A price file: `models:` holding a price map, optionally `families:` (the shape of `config/prices.yaml`). */
export const PriceFileSchema = z.object({ models: PriceMapSchema, families: FamilyMapSchema.optional() }).strict();

/** The built-in table, shipped with the code (src/shipped.ts). */
const DEFAULT_PRICES_FILE = '../config/prices.yaml';

/** Read a price file (YAML or JSON). Bad input throws BAD_CONFIG. */
export function readPriceFile(file: string): PriceMap {
  return readPriceFileFull(file).models;
}

/** A price file's models and families. */
function readPriceFileFull(file: string): { models: PriceMap; families?: FamilyMap | undefined } {
  return readYamlFile(file, PriceFileSchema, 'price file');
}

/** The built-in table's models and families. */
function builtInPrices(): { models: PriceMap; families?: FamilyMap | undefined } {
  return parseYamlText(shippedText(DEFAULT_PRICES_FILE), shippedPlace(DEFAULT_PRICES_FILE), PriceFileSchema, 'price file');
}

let defaults: PriceMap | undefined;
let defaultFamilyMap: FamilyMap | undefined;

/** The built-in table (`config/prices.yaml`), read once. */
export function defaultPrices(): PriceMap {
  defaults ??= builtInPrices().models;
  return defaults;
}

/**
 * The price table for a run: the built-in table with `user` merged over it, model by model. `user` is the
 * config's `prices` value: a path to a price file, or an inline map of model -> price.
 */
export function priceTable(user?: string | PriceMap): PriceMap {
  const own = user === undefined ? {} : typeof user === 'string' ? readPriceFile(user) : user;
  return { ...defaultPrices(), ...normalizeKeys(own) };
}

function normalizeKeys(map: PriceMap): PriceMap {
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k.toLowerCase(), v]));
}

/** Suffixes that name a snapshot of a model rather than another model. */
const SNAPSHOT_SUFFIXES = [
  /-\d{4}-\d{2}-\d{2}$/, // OpenAI: gpt-4o-2024-08-06
  /-\d{8}$/, // Anthropic: claude-sonnet-4-5-20250929
  /-latest$/, // claude-3-7-sonnet-latest
  /-\d{3}$/, // Gemini: gemini-2.0-flash-001
];

/** The names to try for a model, most specific first: as given, then without vendor prefix and snapshot suffixes. */
export function modelCandidates(model: string): string[] {
  const out: string[] = [];
  let name = model.trim().toLowerCase();
  const push = (n: string): void => {
    if (n !== '' && !out.includes(n)) out.push(n);
  };
  push(name);
  // openai/gpt-4o (gateways), models/gemini-2.5-pro (Gemini's own naming)
  const slash = name.lastIndexOf('/');
  if (slash !== -1) push((name = name.slice(slash + 1)));
  for (let changed = true; changed;) {
    changed = false;
    for (const re of SNAPSHOT_SUFFIXES) {
      if (re.test(name)) {
        push((name = name.replace(re, '')));
        changed = true;
      }
    }
  }
  return out;
}

/** The price of a model: an exact entry, else the entry for its name without snapshot suffix; null when none. */
export function priceFor(model: string | undefined, table: PriceMap = defaultPrices()): { model: string; price: ModelPrice } | null {
  if (model === undefined) return null;
  for (const name of modelCandidates(model)) {
    const price = table[name];
    if (price !== undefined) return { model: name, price };
  }
  return null;
}

/**
 * The families a price file adds (`families:` in `config/prices.yaml`, then a user's price file, provider by
 * provider). The built-in providers' families are their adapters' (`ProviderInfo.modelFamilies`): `buildOverridePlan`
 * puts these over them.
 */
export function modelFamilies(user?: string | PriceMap): FamilyMap {
  defaultFamilyMap ??= builtInPrices().families ?? {};
  const own = typeof user === 'string' ? (readPriceFileFull(user).families ?? {}) : {};
  return { ...defaultFamilyMap, ...own };
}

/**
 * The provider a model belongs to, from the families: `{provider}` when exactly one family claims it, `{ambiguous}`
 * with the providers when several do, null when none does.
 */
export function providerOfModel(
  model: string,
  families: FamilyMap = modelFamilies(),
): { provider: string } | { ambiguous: string[] } | null {
  for (const name of modelCandidates(model)) {
    const hits = Object.entries(families)
      .filter(([, entries]) => entries.some((e) => inFamily(name, e.toLowerCase())))
      .map(([provider]) => provider);
    if (hits.length === 1) return { provider: hits[0] as string };
    if (hits.length > 1) return { ambiguous: hits };
  }
  return null;
}

function inFamily(name: string, entry: string): boolean {
  return entry.endsWith('-') ? name.startsWith(entry) : name === entry || name.startsWith(`${entry}-`);
}
