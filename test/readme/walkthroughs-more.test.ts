/** The documentation's walkthroughs of the `more` group (test/readme/walkthrough-run.ts). */
import { walkthroughTests } from './walkthrough-run.js';

walkthroughTests('more');
