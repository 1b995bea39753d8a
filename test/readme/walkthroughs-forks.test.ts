/** The documentation's walkthroughs of the `forks` group (test/readme/walkthrough-run.ts). */
import { walkthroughTests } from './walkthrough-run.js';

walkthroughTests('forks');
