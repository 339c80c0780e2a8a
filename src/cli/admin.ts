import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../app/config.js';
import { migrationDirs, openStores } from '../app/service.js';
import { migrateStores } from '../platform/migrations.js';
import { SCOPES, type Scope } from '../tenancy/keys.js';
import { createApiKey, createUser, provisionTenant } from '../tenancy/tenancy-store.js';
import type { AdminCommand } from './admin-command.js';
import { adminCommands } from './admin-commands.js';

/**
 * `npm run admin -- <command> [options]`: operator tasks against the configured stores
 * (DATABASE_URL / CLICKHOUSE_URL, else the embedded ones under DATA_DIR — stop the service first
 * when it runs on the embedded stores, since they belong to one process at a time).
 */
const builtIn: AdminCommand[] = [
  {
    // For deployments that migrate as a separate step (LOOKOUT_MIGRATE=off on the service): the same
    // locked run a starting service does, so it is safe while services start or run.
    name: 'migrate',
    usage: 'migrate',
    options: {},
    migrate: 'none',
    async run(deps) {
      return migrateStores(deps.sql, deps.ch, migrationDirs);
    },
  },
  {
    name: 'create-tenant',
    usage: 'create-tenant --name NAME',
    options: { name: { type: 'string' } },
    async run(deps, values) {
      if (!values.name) throw new Error('--name is required');
      // The same bound as POST /api/tenants (and every other name of the API).
      if (String(values.name).length > 200) throw new Error('--name must be at most 200 characters');
      const created = await provisionTenant(deps.sql, String(values.name));
      return { tenant: created.tenant, admin_key: created.adminKey };
    },
  },
  {
    name: 'create-user',
    usage: 'create-user --tenant TENANT_ID --name NAME [--email EMAIL]',
    options: { tenant: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' } },
    async run(deps, values) {
      if (!values.tenant || !values.name) throw new Error('--tenant and --name are required');
      if (String(values.name).length > 200) throw new Error('--name must be at most 200 characters');
      return createUser(deps.sql, String(values.tenant), String(values.name), values.email ? String(values.email) : null);
    },
  },
  {
    name: 'create-key',
    usage: `create-key --tenant TENANT_ID --name NAME --scope ${SCOPES.join('|')} [--project PROJECT_ID] [--user USER_ID]`,
    options: { tenant: { type: 'string' }, name: { type: 'string' }, scope: { type: 'string' }, project: { type: 'string' }, user: { type: 'string' } },
    async run(deps, values) {
      const scope = String(values.scope ?? '') as Scope;
      if (!values.tenant || !values.name || !SCOPES.includes(scope)) throw new Error('--tenant, --name and a valid --scope are required');
      if (String(values.name).length > 200) throw new Error('--name must be at most 200 characters');
      return createApiKey(deps.sql, String(values.tenant), {
        name: String(values.name),
        scope,
        projectId: values.project ? String(values.project) : null,
        userId: values.user ? String(values.user) : null,
      });
    },
  },
  {
    name: 'list-tenants',
    usage: 'list-tenants',
    options: {},
    async run(deps) {
      return deps.sql`select id, name, created_at from tenants order by created_at`;
    },
  },
];

async function main(argv: string[]): Promise<number> {
  const commands = [...builtIn, ...adminCommands];
  const [name, ...rest] = argv;
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`usage: npm run admin -- <command>\n\ncommands:\n${commands.map((c) => `  ${c.usage}`).join('\n')}\n`);
    return name ? 1 : 0;
  }
  const { values } = parseArgs({ args: rest, options: command.options, strict: true });
  const config = loadConfig();
  // No worker threads for a one-shot command: the pool with 0 threads runs any task inline.
  const stores = await openStores({ ...config, computeThreads: 0 }, pino({ level: 'silent' }), { migrate: command.migrate });
  try {
    const result = await command.run(stores.deps, values as Record<string, string | boolean | undefined>);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } finally {
    await stores.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(1);
  },
);
