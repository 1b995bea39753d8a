/** The documentation's walkthroughs of the `start` group (test/readme/walkthrough-run.ts). */
import { walkthroughTests } from './walkthrough-run.js';

walkthroughTests('start');
