import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/app/config.js';
import { projectRoot } from '../../../src/app/project-root.js';

// No Docker engine runs on our machines, so the compose file is checked by reading it: the same
// env variables the service reads, pointing at the services the file defines, with matching credentials.
const compose = parse(fs.readFileSync(path.join(projectRoot, 'docker-compose.yml'), 'utf8'));

describe('docker-compose.yml', () => {
  it('pins current ClickHouse and PostgreSQL images', () => {
    expect(compose.services.clickhouse.image).toMatch(/^clickhouse\/clickhouse-server:\d+\.\d+(\.\d+)*$/);
    expect(compose.services.postgres.image).toMatch(/^postgres:\d+(\.\d+)*$/);
    expect(Number(compose.services.clickhouse.image.split(':')[1].split('.')[0])).toBeGreaterThanOrEqual(25);
  });

  it('wires the service to both stores through the variables loadConfig reads', () => {
    const service = compose.services.lookout;
    const env = service.environment as Record<string, string>;
    const config = loadConfig(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.startsWith('${') ? '' : v])));
    const pg = new URL(config.databaseUrl!);
    expect(pg.hostname).toBe('postgres');
    expect(pg.port).toBe('5432');
    const pgEnv = compose.services.postgres.environment;
    expect(decodeURIComponent(pg.username)).toBe(pgEnv.POSTGRES_USER);
    expect(decodeURIComponent(pg.password)).toBe(pgEnv.POSTGRES_PASSWORD);
    expect(pg.pathname.slice(1)).toBe(pgEnv.POSTGRES_DB);

    const ch = new URL(config.clickhouse.url!);
    expect(ch.hostname).toBe('clickhouse');
    expect(ch.port).toBe('8123');
    const chEnv = compose.services.clickhouse.environment;
    expect(config.clickhouse.user).toBe(chEnv.CLICKHOUSE_USER);
    expect(config.clickhouse.password).toBe(chEnv.CLICKHOUSE_PASSWORD);
    expect(config.clickhouse.database).toBe(chEnv.CLICKHOUSE_DB);

    expect(Object.keys(service.depends_on).sort()).toEqual(['clickhouse', 'postgres']);
    expect(service.ports).toContain(`${config.port}:${config.port}`);
    expect(fs.existsSync(path.join(projectRoot, service.build, 'Dockerfile'))).toBe(true);
  });

  it('publishes OTLP/gRPC on the port the service opens, and the image exposes both ports', () => {
    const service = compose.services.lookout;
    const env = service.environment as Record<string, string>;
    const config = loadConfig(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.startsWith('${') ? '' : v])));
    // The one process has every role, ingest included, so it listens.
    expect(config.roles.has('ingest')).toBe(true);
    expect(config.otlpGrpc?.port).toBe(4317);
    expect(service.ports).toContain(`${config.otlpGrpc!.port}:${config.otlpGrpc!.port}`);
    const dockerfile = fs.readFileSync(path.join(projectRoot, service.build, 'Dockerfile'), 'utf8');
    const exposed = /^EXPOSE (.+)$/m.exec(dockerfile)![1].split(/\s+/);
    expect(exposed.sort()).toEqual([String(config.port), String(config.otlpGrpc!.port)].sort());
  });
});
