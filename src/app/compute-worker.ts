import { computeWorker } from '../platform/compute/compute-worker-entry.js';
import { computeTasks } from './compute-tasks.js';

/** The compute pool's worker thread entry: runs the service's tasks by name. */
export default computeWorker(computeTasks);
