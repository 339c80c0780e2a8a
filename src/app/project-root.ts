import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository root, found from this file whether it runs from src/app/ (tsx) or dist/src/app/ (built).
 * Its own file, below everything: the service, the dashboard router and the CLI all read it, and
 * none of them may import another just for this.
 */
export const projectRoot = (() => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return here.includes(`${path.sep}dist${path.sep}`) ? path.resolve(here, '..', '..', '..') : path.resolve(here, '..', '..');
})();
