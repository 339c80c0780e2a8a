// Worker entry when Lookout runs from TypeScript source (tsx, vitest): a worker thread does not
// inherit the parent's TypeScript loader, so this shim loads compute-worker.ts through tsx's API.
// The built service (dist/) loads compute-worker.js directly and never uses this file.
import { tsImport } from 'tsx/esm/api';

const worker = await tsImport('./compute-worker.ts', import.meta.url);
export default worker.default;
