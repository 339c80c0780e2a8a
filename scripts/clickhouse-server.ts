/**
 * A real ClickHouse server for local use, made from the engine library Lookout already installs
 * (test/helpers/clickhouse-server/). Runs in the foreground until Ctrl-C.
 *
 *   npm run clickhouse-server -- --http-port 8123 --tcp-port 9000 --data ./ch-data \
 *     [--user lookout] [--password secret] [--servers 2]
 *
 * With --servers N it starts N processes (ports counted up from the given ones) named as the shards
 * of the cluster `lookout_test` in each one's `remote_servers`.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startClickHouseServers } from '../test/helpers/clickhouse-server/clickhouse-server.js';

const { values } = parseArgs({
  options: {
    'http-port': { type: 'string', default: '8123' },
    'tcp-port': { type: 'string', default: '9000' },
    data: { type: 'string', default: 'clickhouse-server-data' },
    user: { type: 'string', default: 'lookout' },
    password: { type: 'string', default: 'lookout' },
    servers: { type: 'string', default: '1' },
  },
});
const count = Number(values.servers);
const http = Number(values['http-port']);
const tcp = Number(values['tcp-port']);
if (![count, http, tcp].every((n) => Number.isInteger(n) && n > 0)) throw new Error('--servers, --http-port and --tcp-port take positive integers');
const servers = await startClickHouseServers(count, {
  baseDir: path.resolve(values.data),
  ports: Array.from({ length: count }, (_, i) => ({ http: http + i, tcp: tcp + i })),
  user: values.user,
  password: values.password,
});
for (const server of servers) {
  console.log(`ClickHouse server pid ${server.pid}: CLICKHOUSE_URL=${server.url} CLICKHOUSE_USER=${server.user} CLICKHOUSE_PASSWORD=${server.password} (TCP ${server.tcpPort}, data ${server.dataDir})`);
}
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await Promise.all(servers.map((s) => s.stop()));
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
