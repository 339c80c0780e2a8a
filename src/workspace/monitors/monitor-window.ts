import type { WindowCounts } from './monitor-baseline.js';
import type { ObservationRow } from './monitor-store.js';

/**
 * A monitor's window (docs/monitors.md "Baseline and triggering") kept in memory while it evaluates
 * a group of traces: the latest `size` observations of the active phase, newest first, as read
 * once under the monitor's lock, then moved on trace by trace as the stored window would be — a
 * trace observed again keeps its place with its new counts, a new one enters at the top and pushes
 * the oldest out. Stored observations are stamped later than every stored one, whatever the clock
 * says (monitor-store.ts upsertObservations), so a new trace is always the newest.
 */
export class ActiveWindow {
  constructor(
    private readonly rows: ObservationRow[],
    private readonly size: number,
  ) {}

  /** A trace observed again: its counts change where it stands; a new one enters at the top. */
  observe(row: ObservationRow, isNew: boolean): void {
    const at = this.rows.findIndex((r) => r.trace_id === row.trace_id);
    if (at >= 0) this.rows[at] = row;
    else if (isNew) {
      this.rows.unshift(row);
      if (this.rows.length > this.size) this.rows.pop();
    }
  }

  get counts(): WindowCounts {
    return { traces: this.rows.length, calls: this.rows.reduce((n, r) => n + r.calls, 0), matches: this.rows.reduce((n, r) => n + r.matches, 0) };
  }
}

