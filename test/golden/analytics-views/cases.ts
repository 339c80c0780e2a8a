/**
 * Every statement of the preset views, with fixed parameters, whose printed SQL and parameters are
 * pinned in the neighbouring `<name>.sql` files (golden.test.ts compares them). The views issue
 * their statements only through these builders (view-sql.ts selectRows takes an AST), so this
 * list is every statement they can run; the bucket expressions are pinned for each granularity.
 */
import type { SelectNode } from '../../../src/analytics/query/ast.js';
import { agentsStatement, agentToolsStatement } from '../../../src/analytics/views/agent-scorecard-view.js';
import { baseStatement } from '../../../src/analytics/views/base-view.js';
import { probeStatement, providerProbeStatement, traceCapabilitiesStatement } from '../../../src/analytics/views/coverage.js';
import { generalStatement } from '../../../src/analytics/views/general-view.js';
import { modelCallsStatement, modelRunsStatement } from '../../../src/analytics/views/model-scorecard-view.js';
import { issueEventsStatement, resolutionsStatement, roiTracesStatement } from '../../../src/analytics/views/roi-view.js';
import type { Granularity } from '../../../src/analytics/views/time-buckets.js';
import { toolsStatement } from '../../../src/analytics/views/tool-aggregates-view.js';
import { windowStatement } from '../../../src/analytics/views/window-view.js';

export const GOLDEN_TENANT = 'tenant-golden';
export const GOLDEN_PROJECT = 'project-golden';

/** A window that starts mid-week and mid-month, so week and month buckets start before it. */
const window = { start: new Date('2026-10-28T00:00:00Z'), endExclusive: new Date('2026-11-22T00:00:00Z') };
const windowed = (granularity: Granularity) => ({ window, granularity });

export const VIEW_GOLDEN_CASES: Record<string, SelectNode> = {
  'general': generalStatement({ window: { start: new Date('2026-11-21T06:00:00Z'), endExclusive: new Date('2026-11-22T06:00:00Z') }, hours: 24, granularity: 'day' }),
  'base-day': baseStatement(windowed('day')),
  'base-week': baseStatement(windowed('week')),
  'base-month': baseStatement(windowed('month')),
  'window': windowStatement(windowed('week')),
  'coverage-trace-capabilities': traceCapabilitiesStatement(),
  'coverage-provider-probe': providerProbeStatement(),
  'coverage-tools-probe': probeStatement('event_tool_called'),
  'model-scorecard-runs': modelRunsStatement({ window }),
  'model-scorecard-calls': modelCallsStatement({ window }),
  'agent-scorecard-agents': agentsStatement(windowed('day')),
  'agent-scorecard-tools': agentToolsStatement(windowed('day')),
  'tool-aggregates-day': toolsStatement(windowed('day')),
  'tool-aggregates-week': toolsStatement(windowed('week')),
  'tool-aggregates-month': toolsStatement(windowed('month')),
  'roi-traces': roiTracesStatement(windowed('week')),
  'roi-issue-events': issueEventsStatement(windowed('week')),
  'roi-resolutions': resolutionsStatement(windowed('week')),
};
