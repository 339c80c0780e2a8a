/**
 * Bytes per stored-trace registry row (docs/scale-out.md "registry size"): builds each layout in its
 * own schema on an embedded PostgreSQL, fills it with `--rows` traces (UUID keys as Lookout's are,
 * times of the last hour), and prints pg_total_relation_size / rows, split into heap and indexes.
 *
 *   npx tsx bench/registry/row-size.ts [--rows 200000]
 *
 * Layouts: `021` (sql/021_stored_traces.sql), `021 + latest_span_at - first_seen_at` (the window's
 * column alone), `022` (what the migrations build today: uuid key columns too), and a candidate
 * measured and not adopted: a BRIN index on last_seen_at (the retention job's ordered pages need the
 * B-tree: a BRIN scan sorts every row past the cutoff for each page).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openPostgres } from '../../src/platform/postgres/postgres.js';

const args = process.argv.slice(2);
const rowsArg = args.indexOf('--rows');
const rows = rowsArg >= 0 ? Number(args[rowsArg + 1]) : 200_000;

const layouts: Record<string, { key: string; columns: string; index: string }> = {
  '021': { key: 'text', columns: 'first_seen_at timestamptz not null default now(),', index: 'btree (last_seen_at)' },
  '021 + latest_span_at - first_seen_at': { key: 'text', columns: 'latest_span_at timestamptz,', index: 'btree (last_seen_at)' },
  '022': { key: 'uuid', columns: 'latest_span_at timestamptz,', index: 'btree (last_seen_at)' },
  '022, BRIN on last_seen_at': { key: 'uuid', columns: 'latest_span_at timestamptz,', index: 'brin (last_seen_at)' },
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-registry-size-'));
const pg = await openPostgres({ databaseUrl: null, dataDir: dir });
try {
  console.log(`rows: ${rows}`);
  console.log('| layout | bytes/row | heap | primary key | last_seen_at index |');
  console.log('|-|-:|-:|-:|-:|');
  let n = 0;
  for (const [name, l] of Object.entries(layouts)) {
    const schema = `layout_${n++}`;
    await pg.sql.unsafe(`create schema ${schema}`);
    await pg.sql.unsafe(`
      create table ${schema}.stored_traces (
        tenant_id ${l.key} not null, project_id ${l.key} not null, trace_id ${l.key} not null,
        ${l.columns}
        last_seen_at timestamptz not null default now(),
        first_settled_at timestamptz,
        registrations bigint not null default 1,
        primary key (tenant_id, project_id, trace_id)
      ) with (fillfactor = 90)`);
    await pg.sql.unsafe(`create index stored_traces_last_seen on ${schema}.stored_traces using ${l.index}`);
    // One tenant, ten projects (as the registry sees them: few tenants, a trace id per trace); rows
    // arrive in time order, as writers insert them.
    const latest = l.columns.includes('latest_span_at') ? ', latest_span_at' : '';
    await pg.sql.unsafe(`
      insert into ${schema}.stored_traces (tenant_id, project_id, trace_id, last_seen_at${latest})
      select t::${l.key}, (array[${Array.from({ length: 10 }, () => `'${crypto.randomUUID()}'`).join(',')}])[1 + i % 10]::${l.key},
             gen_random_uuid()::${l.key}, now() - interval '1 hour' + i * interval '1 millisecond'${latest ? ", now() - interval '1 hour' + i * interval '1 millisecond'" : ''}
      from (select '${crypto.randomUUID()}' as t) tenant, generate_series(1, ${rows}) as i`);
    // A settled trace has first_settled_at.
    await pg.sql.unsafe(`update ${schema}.stored_traces set first_settled_at = last_seen_at`);
    await pg.sql.unsafe(`vacuum full ${schema}.stored_traces`);
    const [s] = await pg.sql.unsafe<{ total: string; heap: string; pk: string; idx: string }[]>(`
      select pg_total_relation_size('${schema}.stored_traces') as total, pg_relation_size('${schema}.stored_traces') as heap,
             pg_relation_size('${schema}.stored_traces_pkey') as pk, pg_relation_size('${schema}.stored_traces_last_seen') as idx`);
    const per = (v: string) => (Number(v) / rows).toFixed(0);
    console.log(`| ${name} | ${per(s.total)} | ${per(s.heap)} | ${per(s.pk)} | ${per(s.idx)} |`);
  }
} finally {
  await pg.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
