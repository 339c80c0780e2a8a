import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/app/config.js';
import { projectRoot } from '../../../src/app/project-root.js';

// No Docker engine runs on our machines, so docker-compose.cluster.yml is checked by reading it and
// the configuration files it mounts: every name one file uses must be what another file defines.
const compose = parse(fs.readFileSync(path.join(projectRoot, 'docker-compose.cluster.yml'), 'utf8'), { merge: true });
const services = compose.services as Record<string, any>;

/** The host file mounted at `target` in a service (volumes `./host:target[:ro]`). */
function mounted(service: string, target: string): string {
  const volume = (services[service].volumes as string[]).find((v) => v.split(':')[1] === target);
  if (!volume) throw new Error(`${service} mounts nothing at ${target}`);
  const file = path.join(projectRoot, volume.split(':')[0]);
  expect(fs.existsSync(file)).toBe(true);
  return fs.readFileSync(file, 'utf8');
}

/** Text of every <tag> element, in order (the XML here is flat configuration). */
const all = (xml: string, tag: string) => [...xml.replace(/<!--[\s\S]*?-->/g, '').matchAll(new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1].trim());
const one = (xml: string, tag: string) => {
  const found = all(xml, tag);
  expect([tag, found.length]).toEqual([tag, 1]);
  return found[0];
};
const lookoutEnv = (name: string) => {
  const env = services[name].environment as Record<string, string>;
  return { env, config: loadConfig(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.startsWith('${') ? '' : v]))) };
};

const clickhouseNodes = Object.keys(services).filter((name) => String(services[name].image).startsWith('clickhouse/clickhouse-server:'));
const lookouts = ['lookout-migrate', 'lookout-api', 'lookout-worker'];

describe('docker-compose.cluster.yml', () => {
  it('runs Keeper and 2 shards x 2 replicas whose macros match their place in remote_servers', () => {
    expect(services.keeper.image).toMatch(/^clickhouse\/clickhouse-keeper:\d+\.\d+$/);
    expect(clickhouseNodes.sort()).toEqual(['ch-s1-r1', 'ch-s1-r2', 'ch-s2-r1', 'ch-s2-r2']);
    const cluster = mounted('ch-s1-r1', '/etc/clickhouse-server/config.d/cluster.xml');
    const remote = one(cluster, 'remote_servers');
    const clusterName = /^<(\w+)>/.exec(remote)![1];
    const shards = all(remote, 'shard');
    expect(shards).toHaveLength(2);
    const replicaNames = new Set<string>();
    shards.forEach((shard, i) => {
      expect(one(shard, 'internal_replication')).toBe('true');
      const replicas = all(shard, 'replica');
      expect(replicas).toHaveLength(2);
      for (const replica of replicas) {
        const host = one(replica, 'host');
        const node = services[host];
        expect(node, `${host} is a service`).toBeDefined();
        expect(node.hostname).toBe(host);
        expect(one(replica, 'port')).toBe('9000');
        expect(one(replica, 'user')).toBe(node.environment.CLICKHOUSE_USER);
        expect(one(replica, 'password')).toBe(node.environment.CLICKHOUSE_PASSWORD);
        // Every node mounts the same cluster file and its own macros: shard number, unique replica.
        expect(mounted(host, '/etc/clickhouse-server/config.d/cluster.xml')).toBe(cluster);
        const macros = mounted(host, '/etc/clickhouse-server/config.d/macros.xml');
        expect(Number(one(macros, 'shard'))).toBe(i + 1);
        replicaNames.add(one(macros, 'replica'));
        expect(node.depends_on.keeper).toBeDefined();
      }
    });
    expect(replicaNames.size).toBe(4);
    for (const name of lookouts) expect(lookoutEnv(name).config.clickhouse.cluster).toBe(clusterName);

    const keeper = mounted('keeper', '/etc/clickhouse-keeper/keeper_config.xml');
    const zookeeper = one(cluster, 'zookeeper');
    expect(one(zookeeper, 'host')).toBe('keeper');
    expect(one(zookeeper, 'port')).toBe(one(keeper, 'tcp_port'));
    expect(one(one(keeper, 'raft_configuration'), 'hostname')).toBe('keeper');
    expect(one(cluster, 'distributed_ddl')).toContain('<path>');
  });

  it('wires every Lookout process to PostgreSQL and a ClickHouse node with the variables loadConfig reads', () => {
    const pgEnv = services.postgres.environment;
    for (const name of lookouts) {
      const { config } = lookoutEnv(name);
      const pg = new URL(config.databaseUrl!);
      expect([name, pg.hostname, pg.port, decodeURIComponent(pg.username), decodeURIComponent(pg.password), pg.pathname.slice(1)]).toEqual([
        name, 'postgres', '5432', pgEnv.POSTGRES_USER, pgEnv.POSTGRES_PASSWORD, pgEnv.POSTGRES_DB,
      ]);
      const ch = new URL(config.clickhouse.url!);
      expect(clickhouseNodes).toContain(ch.hostname);
      expect(ch.port).toBe('8123');
      const node = services[ch.hostname].environment;
      expect([config.clickhouse.user, config.clickhouse.password, config.clickhouse.database]).toEqual([node.CLICKHOUSE_USER, node.CLICKHOUSE_PASSWORD, node.CLICKHOUSE_DB]);
      expect(config.clickhouse.insertQuorum).toBe('auto');
      expect(services[name].build).toBe('.');
      for (const store of [...clickhouseNodes, 'postgres']) expect([name, store, services[name].depends_on[store]?.condition]).toEqual([name, store, 'service_healthy']);
    }
  });

  it('migrates once as its own step, then starts an api+ingest process and a worker with migration off', () => {
    // The image's build (tsconfig.build.json: src -> dist/src) of `npm run admin -- migrate`.
    expect(services['lookout-migrate'].command).toEqual(['node', 'dist/src/cli/admin.js', 'migrate']);
    expect(fs.existsSync(path.join(projectRoot, 'src', 'cli', 'admin.ts'))).toBe(true);
    expect(lookoutEnv('lookout-migrate').env.LOOKOUT_ROLES).toBeUndefined();
    const roles: Record<string, string> = {};
    for (const name of ['lookout-api', 'lookout-worker']) {
      const { env, config } = lookoutEnv(name);
      expect(config.migrateOnStart).toBe(false);
      expect(services[name].depends_on['lookout-migrate']).toEqual({ condition: 'service_completed_successfully' });
      expect(services[name].healthcheck.test.join(' ')).toContain(`127.0.0.1:${config.port}/readyz`);
      roles[name] = env.LOOKOUT_ROLES;
    }
    expect(roles).toEqual({ 'lookout-api': 'api,ingest', 'lookout-worker': 'worker' });
    expect([...lookoutEnv('lookout-api').config.roles].sort()).toEqual(['api', 'ingest']);
    expect([...lookoutEnv('lookout-worker').config.roles]).toEqual(['worker']);
    // Only the proxy publishes a port: Lookout processes are reached through it.
    expect(Object.keys(services).filter((name) => services[name].ports)).toEqual(['proxy']);
    // OTLP/gRPC opens where ingest runs, not in the worker.
    expect(lookoutEnv('lookout-api').config.otlpGrpc?.port).toBe(4317);
    expect(lookoutEnv('lookout-worker').config.roles.has('ingest')).toBe(false);
  });

  it('puts the proxy in front of the api+ingest process', () => {
    expect(services.proxy.image).toMatch(/^nginx:\d+\.\d+$/);
    const conf = mounted('proxy', '/etc/nginx/conf.d/default.conf');
    const upstream = /upstream (\w+) \{([^}]*)\}/.exec(conf)!;
    const servers = [...upstream[2].matchAll(/server ([\w-]+):(\d+);/g)].map((m) => [m[1], m[2]]);
    const api = lookoutEnv('lookout-api').config;
    expect(servers).toEqual([['lookout-api', String(api.port)]]);
    expect(conf).toContain(`proxy_pass http://${upstream[1]};`);
    const listen = /listen (\d+);/.exec(conf)![1];
    expect(services.proxy.ports[0]).toBe(`8080:${listen}`);
    expect(services.proxy.depends_on['lookout-api']).toEqual({ condition: 'service_healthy' });
    // Bodies as large as the service accepts reach it (it answers 413 itself beyond OTLP_MAX_BYTES).
    const [, megabytes] = /client_max_body_size (\d+)m;/.exec(conf)!;
    expect(Number(megabytes) * 1024 * 1024).toBeGreaterThanOrEqual(api.otlpMaxBytes);
  });

  it('passes OTLP/gRPC through the proxy to the api+ingest process', () => {
    const conf = mounted('proxy', '/etc/nginx/conf.d/default.conf');
    const api = lookoutEnv('lookout-api').config;
    const servers = (name: string) => [...new RegExp(`upstream ${name} \\{([^}]*)\\}`).exec(conf)![1].matchAll(/server ([\w-]+):(\d+);/g)].map((m) => [m[1], m[2]]);
    const upstream = /grpc_pass grpc:\/\/(\w+);/.exec(conf)![1];
    expect(servers(upstream)).toEqual([['lookout-api', String(api.otlpGrpc!.port)]]);
    // The server block that passes gRPC: HTTP/2 on its own port, published, bodies up to OTLP_MAX_BYTES.
    const block = conf.slice(conf.lastIndexOf('server {', conf.indexOf('grpc_pass')));
    expect(block).toContain('http2 on;');
    const listen = /listen (\d+);/.exec(block)![1];
    expect(services.proxy.ports).toEqual(['8080:8080', `${api.otlpGrpc!.port}:${listen}`]);
    const [, megabytes] = /client_max_body_size (\d+)m;/.exec(block)!;
    expect(Number(megabytes) * 1024 * 1024).toBeGreaterThanOrEqual(api.otlpMaxBytes);
  });

  it('pins the same ClickHouse and PostgreSQL versions as docker-compose.yml', () => {
    const single = parse(fs.readFileSync(path.join(projectRoot, 'docker-compose.yml'), 'utf8'));
    for (const node of clickhouseNodes) expect(services[node].image).toBe(single.services.clickhouse.image);
    expect(services.keeper.image.split(':')[1]).toBe(single.services.clickhouse.image.split(':')[1]);
    expect(services.postgres.image).toBe(single.services.postgres.image);
  });
});
