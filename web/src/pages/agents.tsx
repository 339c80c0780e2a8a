import { getAgentScorecard } from '../api/endpoints.js';
import type { AgentScorecardRow } from '../api/types.js';
import { CostValue, reasonText } from '../components/cost-summary.js';
import { Link } from '../components/link.js';
import { SortableTable } from '../components/sortable-table.js';
import { Empty, Loaded } from '../components/states.js';
import { WindowPicker } from '../components/window-picker.js';
import { formatCount, formatMs, formatRate } from '../format.js';
import type { WindowSelection } from '../time-window.js';
import { useResource } from '../use-resource.js';
import { windowTracesHref } from '../drill-down.js';

export function AgentsPage({ projectId, window, customActive }: { projectId: string; window: WindowSelection; customActive: boolean }) {
  const view = useResource(() => getAgentScorecard(projectId, window), [projectId, window.start, window.endExclusive]);
  return (
    <>
      <div class="page-head">
        <h1>Agent scorecard</h1>
        <WindowPicker window={window} customActive={customActive} showGranularity={false} />
      </div>
      <Loaded resource={view} label="Loading the agent scorecard…">
        {(data) =>
          data.rows.length === 0 ? (
            <Empty>
              <p>No agent ran in this window.</p>
            </Empty>
          ) : (
            <SortableTable<AgentScorecardRow>
              testId="agent-scorecard"
              rows={data.rows}
              rowKey={(row) => row.agent}
              initialSort={{ key: 'traces', direction: 'desc' }}
              columns={[
                {
                  key: 'agent',
                  label: 'Agent',
                  value: (row) => row.agent,
                  render: (row) => <Link href={windowTracesHref(projectId, window, { agent_name: row.agent })}>{row.agent || '(unnamed)'}</Link>,
                },
                { key: 'traces', label: 'Traces', value: (row) => row.traces, render: (row) => formatCount(row.traces), numeric: true },
                { key: 'p50', label: 'p50', value: (row) => row.p50, render: (row) => formatMs(row.p50), numeric: true },
                { key: 'p95', label: 'p95', value: (row) => row.p95, render: (row) => formatMs(row.p95), numeric: true },
                {
                  key: 'error_rate',
                  label: 'Failed runs %',
                  title: 'Failed runs among runs whose root status is known',
                  value: (row) => row.error_rate,
                  render: (row) => formatRate(row.error_rate),
                  numeric: true,
                },
                {
                  key: 'tools_used',
                  label: 'Tools used',
                  value: (row) => row.tools_used,
                  render: (row) => `${row.tools_used_is_lower_bound ? '≥ ' : ''}${formatCount(row.tools_used)}`,
                  numeric: true,
                },
                { key: 'tokens', label: 'Tokens', value: (row) => row.tokens, render: (row) => formatCount(row.tokens), numeric: true },
                {
                  key: 'cost',
                  label: 'Est. cost',
                  value: (row) => row.cost,
                  render: (row) => (
                    <span title={row.cost_is_lower_bound ? `Lower bound: ${row.cost_lower_bound_reasons.map(reasonText).join('; ')}` : `Source: ${row.cost_source}`}>
                      <CostValue value={row.cost} lowerBound={row.cost_is_lower_bound} column />
                    </span>
                  ),
                  numeric: true,
                },
              ]}
            />
          )
        }
      </Loaded>
    </>
  );
}
