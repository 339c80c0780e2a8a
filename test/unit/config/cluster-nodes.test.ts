import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/app/config.js';

describe('CLICKHOUSE_CLUSTER_REPLICATED and CLICKHOUSE_CLUSTER_NODES', () => {
  it('default to a replicated cluster migrated ON CLUSTER, with no node list', () => {
    expect(loadConfig({ CLICKHOUSE_CLUSTER: 'c' }).clickhouse).toMatchObject({ cluster: 'c', replicated: true, nodes: [] });
    expect(loadConfig({}).clickhouse).toMatchObject({ cluster: null, replicated: true, nodes: [] });
  });

  it('read shards without replicas with every node listed', () => {
    const config = loadConfig({ CLICKHOUSE_CLUSTER: 'c', CLICKHOUSE_CLUSTER_REPLICATED: 'false', CLICKHOUSE_CLUSTER_NODES: 'http://ch1:8123, https://ch2:8443/' });
    expect(config.clickhouse).toMatchObject({ replicated: false, nodes: ['http://ch1:8123', 'https://ch2:8443/'] });
  });

  it('refuse combinations that would leave a node unmigrated or split a replicated table', () => {
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'c', CLICKHOUSE_CLUSTER_REPLICATED: 'false' })).toThrow(/needs CLICKHOUSE_CLUSTER_NODES/);
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'c', CLICKHOUSE_CLUSTER_NODES: 'http://ch1:8123' })).toThrow(/for clusters without replication/);
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER_REPLICATED: 'false', CLICKHOUSE_CLUSTER_NODES: 'http://ch1:8123' })).toThrow(/need CLICKHOUSE_CLUSTER/);
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'c', CLICKHOUSE_CLUSTER_REPLICATED: 'false', CLICKHOUSE_CLUSTER_NODES: 'ch1:8123' })).toThrow(/CLICKHOUSE_CLUSTER_NODES must be a comma-separated list of http\(s\) URLs of nodes/);
  });
});
