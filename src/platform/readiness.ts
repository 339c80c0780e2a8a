import fs from 'node:fs';
import type { Logger } from 'pino';
import type { ClickHouseStore } from './clickhouse/clickhouse.js';
import type { Sql } from './postgres/postgres.js';

/** How often free space under DATA_DIR is read (statfs: one cheap system call). */
const DISK_CHECK_MS = 2_000;

export interface ReadinessReport {
  ready: boolean;
  postgres: boolean;
  clickhouse: boolean;
  /** Free space under DATA_DIR is above DATA_DIR_MIN_FREE_MB (always true when no store is embedded). */
  disk: boolean;
  /** Bytes free under DATA_DIR for this process (statfs bavail), null when not measured. */
  diskFreeBytes: number | null;
}

/**
 * Whether this process can do its work: both stores answer within their own short probe timeout,
 * and the disk of the embedded stores has room. `/readyz` reports it; ingestion refuses while the
 * disk is below the floor, so the embedded PostgreSQL never runs out of space for its WAL.
 */
export class Readiness {
  private freeBytes: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private wasLow = false;

  constructor(
    private readonly options: {
      sql: Sql;
      ch: ClickHouseStore;
      dataDir: string;
      /** Whether DATA_DIR holds a store (embedded PostgreSQL or chdb); only then is its space watched. */
      watchDisk: boolean;
      minFreeBytes: number;
      probeTimeoutMs: number;
      logger: Logger;
    },
  ) {
    if (options.watchDisk) this.readDisk();
  }

  start(): void {
    if (!this.options.watchDisk || this.timer) return;
    this.timer = setInterval(() => this.readDisk(), DISK_CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** True while free space under DATA_DIR is below the floor (as of the last read, at most 2 s old). */
  get diskLow(): boolean {
    return this.freeBytes !== null && this.freeBytes < this.options.minFreeBytes;
  }

  private readDisk(): void {
    try {
      const stats = fs.statfsSync(this.options.dataDir);
      this.freeBytes = Number(stats.bavail) * Number(stats.bsize);
    } catch {
      // DATA_DIR unreadable: leave the last reading; the stores' own probes say what is wrong.
      return;
    }
    const low = this.diskLow;
    if (low !== this.wasLow) {
      if (low) this.options.logger.error({ freeBytes: this.freeBytes, floorBytes: this.options.minFreeBytes }, 'free space under DATA_DIR below the floor: not ready, ingestion refused');
      else this.options.logger.warn({ freeBytes: this.freeBytes }, 'free space under DATA_DIR back above the floor');
      this.wasLow = low;
    }
  }

  /** Probes both stores at once, each bounded by the probe timeout: answers within that bound whatever the stores do. */
  async check(): Promise<ReadinessReport> {
    const timeout = this.options.probeTimeoutMs;
    const [postgres, clickhouse] = await Promise.all([within(this.options.sql`select 1`.then(() => true), timeout), this.options.ch.ping(timeout).catch(() => false)]);
    if (this.options.watchDisk) this.readDisk();
    const disk = !this.diskLow;
    return { ready: postgres && clickhouse && disk, postgres, clickhouse, disk, diskFreeBytes: this.freeBytes };
  }
}

/** `work`'s answer, or false when it fails or takes longer than `ms` (the work itself is left to finish). */
async function within(work: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
