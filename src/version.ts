import { shippedText } from './shipped.js';

/** tapedeck's own version (package.json's), written into every tape header. */
export const VERSION: string = (JSON.parse(shippedText('../package.json')) as { version: string }).version;
