/** The documentation's walkthroughs of the `ci` group (test/readme/walkthrough-run.ts). */
import { walkthroughTests } from './walkthrough-run.js';

walkthroughTests('ci');
