/**
 * The in-process engine's allocator options. The engine library carries its own jemalloc, which
 * reads `JE_MALLOC_CONF` once, when the library loads: so this module sets it before anything
 * loads the engine (clickhouse.ts imports it ahead of the engine's connection module).
 *
 * The library's built-in default keeps pages freed by the engine resident for 5 s
 * (`dirty_decay_ms:5000`, chosen for a server on its own machine). In Lookout the engine shares the
 * service's process: under overload its background merges and inserts allocate and free hundreds of
 * MiB in turn, and those freed pages stayed counted in the service's RSS (bench/isolation overload:
 * engine allocations ~100 MiB at the service's peak while ~330 MiB of its pages were still
 * resident). One second returns them about five times sooner, at the cost of a few more page
 * faults when the engine grows again.
 *
 * An operator's own `JE_MALLOC_CONF` is kept as it is (docs/operations.md, "Memory"). A ClickHouse
 * server (CLICKHOUSE_URL) is its own process and reads none of this.
 */
export const ENGINE_DIRTY_DECAY_MS = 1000;

/** The options set when the environment names none. */
export const ENGINE_ALLOCATOR_CONF = `dirty_decay_ms:${ENGINE_DIRTY_DECAY_MS}`;

if (!process.env.JE_MALLOC_CONF) process.env.JE_MALLOC_CONF = ENGINE_ALLOCATOR_CONF;
