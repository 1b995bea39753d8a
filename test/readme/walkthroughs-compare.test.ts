/** The documentation's walkthroughs of the `compare` group (test/readme/walkthrough-run.ts). */
import { walkthroughTests } from './walkthrough-run.js';

walkthroughTests('compare');
