import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = require('../package.json') as { version: string };

/** tapedeck's own version, written into every tape header. */
export const VERSION: string = pkg.version;
