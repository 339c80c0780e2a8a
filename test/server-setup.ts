import { inject } from 'vitest';

// Runs in each test process of the `server` project before its test file: the run's ClickHouse
// server (test/server-global-setup.ts) becomes CLICKHOUSE_URL for the helpers that open ClickHouse.
const server = inject('clickhouseServer');
process.env.CLICKHOUSE_URL = server.url;
process.env.CLICKHOUSE_USER = server.user;
process.env.CLICKHOUSE_PASSWORD = server.password;
