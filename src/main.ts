import { serve } from './app/serve.js';

await serve();
