/** The documentation's walkthroughs of the `store` group (test/readme/walkthrough-run.ts). */
import { walkthroughTests } from './walkthrough-run.js';

walkthroughTests('store');
