// The service as a process, with the options only a test sets (JSON in the first argument): what
// spawnService runs when a test gives `harness`. Everything else is src/main.ts's, through serve().
import { serve } from '../../src/app/serve.js';
import type { HarnessOptions } from '../../src/app/harness-options.js';

await serve(JSON.parse(process.argv[2] ?? '{}') as HarnessOptions);
