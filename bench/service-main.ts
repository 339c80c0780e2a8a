// The service as a process, with the options only a benchmark sets (JSON in the first argument):
// what startServiceProcess runs when a benchmark gives `harness`. Everything else is src/main.ts's.
import { serve } from '../src/app/serve.js';
import type { HarnessOptions } from '../src/app/harness-options.js';

await serve(JSON.parse(process.argv[2] ?? '{}') as HarnessOptions);
