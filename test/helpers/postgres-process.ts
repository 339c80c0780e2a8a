import fs from 'node:fs';
import path from 'node:path';

/** The embedded PostgreSQL's postmaster under a service's DATA_DIR (postmaster.pid's first line). */
export function postmasterPid(dataDir: string): number {
  const pid = Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  if (!(pid > 0)) throw new Error('no postmaster.pid');
  return pid;
}

/** The postmaster and every process it started (backends, checkpointer, WAL writer, ...), from /proc. */
export function postgresProcesses(dataDir: string): number[] {
  const root = postmasterPid(dataDir);
  const children = fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // Field 4 of /proc/PID/stat is the parent; the command (field 2) may hold spaces, so read after its ')'.
        const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === root;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [root, ...children];
}

/** Sends `signal` to each of `pids` (a process gone meanwhile is skipped). */
export function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone
    }
  }
}
