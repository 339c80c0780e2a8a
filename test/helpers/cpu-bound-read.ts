import { param, sql, type Fragment } from '../../src/platform/clickhouse/sql/fragment.js';
import { tenantGuard } from '../../src/platform/clickhouse/sql/tenant-guard.js';

/**
 * A read that burns CPU until its time limit stops it: hashes of numbers() rows that carry the
 * scope's tenant and project, so the layer's tenant guard applies as to a table. It holds its lane's
 * slot for a known time however loaded the machine is (lane and isolation tests).
 */
export function cpuBoundRead(scope: { tenantId: string; projectId: string }): Fragment {
  return sql`SELECT count() AS n FROM (SELECT number, ${param('String', scope.tenantId)} AS tenant_id, ${param('String', scope.projectId)} AS project_id FROM numbers(1000000000000))
            WHERE ${tenantGuard(scope)} AND sipHash64(number) % 7 = 3`;
}
