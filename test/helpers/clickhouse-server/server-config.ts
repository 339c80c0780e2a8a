/** One server of a test cluster as `remote_servers` names it. */
export interface ServerNode {
  host: string;
  tcpPort: number;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The users file: `user` with a password, the account Lookout connects as. `default` stays without
 * a password because the launcher's own session (the query that keeps the listeners up) runs as it;
 * the server only listens on 127.0.0.1.
 */
export function usersXml(user: string, password: string): string {
  const account = (name: string, secret: string) =>
    `<${name}><password>${escape(secret)}</password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks>` +
    `<profile>default</profile><quota>default</quota><access_management>1</access_management></${name}>`;
  return [
    '<clickhouse>',
    `  <users>${account('default', '')}${user === 'default' ? '' : account(user, password)}</users>`,
    // The query log keeps whole statements (a test reads how long a statement was; the default cuts at 100,000 bytes).
    '  <profiles><default><log_queries_cut_to_length>16777216</log_queries_cut_to_length></default></profiles>',
    '  <quotas><default/></quotas>',
    '</clickhouse>',
    '',
  ].join('\n');
}

/**
 * The server's config file: its users file, the query log (read by tests that check the settings a
 * statement ran with), the part log (what benchmarks read merges' cost from), its macros, and one cluster with every server as a shard of one replica. A
 * server recognises its own entry as local by its TCP port.
 */
export function serverConfigXml(spec: { usersFile: string; clusterName: string; nodes: readonly ServerNode[]; user: string; password: string; shard: number }): string {
  const shards = spec.nodes
    .map((node) =>
      `<shard><internal_replication>true</internal_replication><replica><host>${node.host}</host><port>${node.tcpPort}</port>` +
      `<user>${escape(spec.user)}</user><password>${escape(spec.password)}</password></replica></shard>`)
    .join('');
  return [
    '<clickhouse>',
    `  <user_directories><users_xml><path>${escape(spec.usersFile)}</path></users_xml></user_directories>`,
    '  <query_log><database>system</database><table>query_log</table><flush_interval_milliseconds>1000</flush_interval_milliseconds></query_log>',
    '  <part_log><database>system</database><table>part_log</table><flush_interval_milliseconds>1000</flush_interval_milliseconds></part_log>',
    `  <macros><shard>${spec.shard}</shard><replica>r${spec.shard}</replica><cluster>${spec.clusterName}</cluster></macros>`,
    `  <remote_servers><${spec.clusterName}>${shards}</${spec.clusterName}></remote_servers>`,
    '</clickhouse>',
    '',
  ].join('\n');
}
