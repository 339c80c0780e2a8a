// Writes the statements of the table-rebuild migrations (clickhouse/009 and 010) from their specs
// in scripts/clickhouse-rebuilds/rebuilds.ts, below each file's hand-written header.
import fs from 'node:fs';
import path from 'node:path';
import { REBUILD_MIGRATIONS } from './clickhouse-rebuilds/rebuilds.js';
import { withRebuildStatements } from './clickhouse-rebuilds/rebuild-file.js';

const dir = path.resolve(import.meta.dirname, '..', 'clickhouse');
for (const [file, rebuild] of Object.entries(REBUILD_MIGRATIONS)) {
  const full = path.join(dir, file);
  const before = fs.readFileSync(full, 'utf8');
  const after = withRebuildStatements(before, rebuild);
  if (after !== before) fs.writeFileSync(full, after);
  console.log(`${file}: ${after === before ? 'unchanged' : 'written'}`);
}
