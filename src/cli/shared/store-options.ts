/** The flags every command that reads or writes tapes takes, and the store they name. */
import { loadConfig, type Config, type ConfigOverrides } from '../../config/config.js';
import { openStore } from '../../tape/stores/open-store.js';
import type { LoadedTape, ResolveOptions, TapeStore } from '../../tape/store.js';
import { stringValue, type CommandContext, type OptionsConfig } from './command.js';

export const STORE_OPTIONS: OptionsConfig = {
  dir: { type: 'string' },
  store: { type: 'string' },
  namespace: { type: 'string' },
  config: { type: 'string' },
};

export const STORE_USAGE = [
  '  --dir DIR        the tape folder (default ./tapes, or TAPEDECK_DIR)',
  '  --store URL      a shared store instead: postgres://USER@HOST:PORT/DB (or TAPEDECK_STORE, or store: in the config)',
  '  --namespace NS   keep teams or branches apart in one shared store (or ?namespace=NS in the URL)',
  '  --config FILE    a config file (YAML or JSON) over the built-in defaults',
].join('\n');

/** The config for this command: files, environment, then `--dir` / `--store` / `--namespace` and `extra`. */
export function commandConfig(ctx: CommandContext, extra: ConfigOverrides = {}): Config {
  return loadConfig(
    stringValue(ctx.values, 'config'),
    {
      dir: stringValue(ctx.values, 'dir'),
      store: stringValue(ctx.values, 'store'),
      namespace: stringValue(ctx.values, 'namespace'),
      ...extra,
    },
    ctx.env,
  );
}

/** Open the configured store, run `fn` on it, close it (also when `fn` throws). */
export async function withStore<T>(config: Config, fn: (store: TapeStore) => Promise<T>): Promise<T> {
  const store = await openStore(config);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Resolve a tape reference in the configured store and load the tape (the store is closed again). */
export async function loadTapeRef(config: Config, ref: string, opts: ResolveOptions = {}): Promise<LoadedTape> {
  return withStore(config, async (store) => {
    const found = await store.resolve(ref, opts);
    return found.store.load(found.name);
  });
}
