/** The documentation's walkthroughs of the `replay` group (test/readme/walkthrough-run.ts). */
import { walkthroughTests } from './walkthrough-run.js';

walkthroughTests('replay');
