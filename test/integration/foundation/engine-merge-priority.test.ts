import fs from 'node:fs';
import os from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { MERGE_THREAD_NICE } from '../../../src/platform/clickhouse/engine-merge-priority.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { waitFor } from '../ingest/otlp-client.js';

/**
 * The in-process engine's merge threads run at a lower CPU priority than the rest of the process
 * (engine-merge-priority.ts): found by name among this process's threads once the store is open,
 * while every other thread — the event loop, the engine's query and insert threads — keeps its own.
 */

let store: ClickHouseStore;

afterAll(async () => {
  await store?.close();
});

function threads(): { tid: number; name: string; nice: number }[] {
  return fs.readdirSync('/proc/self/task').flatMap((name) => {
    try {
      return [{ tid: Number(name), name: fs.readFileSync(`/proc/self/task/${name}/comm`, 'utf8').trim(), nice: os.getPriority(Number(name)) }];
    } catch {
      return []; // ended meanwhile
    }
  });
}

describe('engine merge threads', () => {
  it('run at nice 10 once the embedded engine has merged, and no other thread does', async () => {
    store = await openClickHouse({ url: null, user: '', password: '', database: 'merge_priority', cluster: null, dataDir: tempDataDir() });
    const { client } = store;
    await client.command({ query: 'CREATE TABLE merge_priority.t (k UInt64, v String) ENGINE = MergeTree ORDER BY k' });
    // Small parts, one per insert, so the engine's background merges start.
    for (let i = 0; i < 12; i++) {
      await client.command({ query: `INSERT INTO merge_priority.t SELECT number, toString(number) FROM numbers(${i * 1000}, 1000)` });
    }
    const merged = await waitFor(async () => {
      const result = await client.query({ query: "SELECT count() AS n FROM system.parts WHERE database = 'merge_priority' AND table = 't' AND active", format: 'JSONEachRow' });
      const [{ n }] = await result.json<{ n: string }>();
      return Number(n) < 12 ? true : undefined;
    }, 60_000, 'a background merge');
    expect(merged).toBe(true);

    const lowered = await waitFor(async () => {
      const merges = threads().filter((t) => t.name.startsWith('MergeMutate'));
      return merges.length > 0 && merges.every((t) => t.nice === MERGE_THREAD_NICE) ? merges : undefined;
    }, 15_000, 'merge threads at the lower priority');
    expect(lowered.length).toBeGreaterThan(0);

    const others = threads().filter((t) => !t.name.startsWith('MergeMutate'));
    expect(others.find((t) => t.tid === process.pid)?.nice).toBe(0);
    // The engine sets some of its own (its memory worker runs at -20): none of them is lowered.
    expect(others.filter((t) => t.nice === MERGE_THREAD_NICE)).toEqual([]);
  }, 120_000);
});
