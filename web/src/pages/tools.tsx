import { getToolAggregates } from '../api/endpoints.js';
import type { ToolAggregateRow, ToolErrorConcentration } from '../api/types.js';
import { CallLink, DrillDownNote } from '../components/call-link.js';
import { TimeChart } from '../components/time-chart.js';
import { alignByDate } from './overview.js';
import { SortableTable } from '../components/sortable-table.js';
import { Empty, Loaded } from '../components/states.js';
import { WindowPicker } from '../components/window-picker.js';
import { formatCount, formatMs, formatRate } from '../format.js';
import type { WindowSelection } from '../time-window.js';
import { useResource } from '../use-resource.js';
import { tracesDrill } from '../drill-down.js';

export function ToolsPage({ projectId, window, customActive }: { projectId: string; window: WindowSelection; customActive: boolean }) {
  const view = useResource(() => getToolAggregates(projectId, window), [projectId, window.start, window.endExclusive, window.granularity]);
  return (
    <>
      <div class="page-head">
        <h1>Tool aggregates</h1>
        <WindowPicker window={window} customActive={customActive} />
      </div>
      <Loaded resource={view} label="Loading tool aggregates…">
        {(data) => {
          const rows = data.rows;
          const volume = alignByDate([data.volume, data.failing_volume], [(p) => p.value, (p) => p.value]);
          return rows.length === 0 ? (
            <Empty>
              <p>No tool was called in this window.</p>
            </Empty>
          ) : (
            <>
            <DrillDownNote what="tool" counted="The figures here" />
            <SortableTable<ToolAggregateRow>
              testId="tool-aggregates"
              rows={rows}
              rowKey={(row) => row.tool}
              initialSort={{ key: 'calls', direction: 'desc' }}
              columns={[
                { key: 'tool', label: 'Tool', value: (row) => row.tool, render: (row) => <CallLink projectId={projectId} window={data.window} filter="tool" name={row.tool} /> },
                { key: 'calls', label: 'Calls', value: (row) => row.calls, render: (row) => formatCount(row.calls), numeric: true },
                { key: 'errors', label: 'Failed calls', title: 'Calls of this tool whose span ended with an error status', value: (row) => row.errors, render: (row) => formatCount(row.errors), numeric: true },
                { key: 'error_rate', label: 'Failed calls %', title: 'Failed calls among all calls of this tool', value: (row) => row.error_rate, render: (row) => formatRate(row.error_rate), numeric: true },
                { key: 'p50', label: 'p50', value: (row) => row.p50, render: (row) => formatMs(row.p50), numeric: true },
                { key: 'p95', label: 'p95', value: (row) => row.p95, render: (row) => formatMs(row.p95), numeric: true },
                { key: 'traces', label: 'Traces', value: (row) => row.traces, render: (row) => formatCount(row.traces), numeric: true },
                { key: 'output_tokens', label: 'Output tokens', value: (row) => row.output_tokens, render: (row) => formatCount(row.output_tokens), numeric: true },
              ]}
            />
            <div class="chart-grid">
              <TimeChart
                title={`Tool calls per ${data.granularity ?? 'day'}`}
                testId="chart-tool-volume"
                drill={tracesDrill(projectId, window)}
                dates={volume.dates}
                format={formatCount}
                series={[
                  { label: 'Calls', values: volume.values[0], color: '#2f6fde' },
                  { label: 'Failing calls', values: volume.values[1], color: '#d23c3c' },
                ]}
              />
              {data.error_concentration.length > 0 && (
                <section class="panel">
                  <h2>Where errors concentrate</h2>
                  <SortableTable<ToolErrorConcentration>
                    testId="tool-error-concentration"
                    rows={data.error_concentration}
                    rowKey={(row) => row.tool}
                    columns={[
                      { key: 'tool', label: 'Tool', value: (row) => row.tool, render: (row) => <CallLink projectId={projectId} window={data.window} filter="tool" name={row.tool} /> },
                      { key: 'errors', label: 'Failed calls', value: (row) => row.errors, render: (row) => formatCount(row.errors), numeric: true },
                      { key: 'share', label: 'Share', value: (row) => row.share, render: (row) => formatRate(row.share), numeric: true },
                      { key: 'cumulative_share', label: 'Cumulative', value: (row) => row.cumulative_share, render: (row) => formatRate(row.cumulative_share), numeric: true },
                    ]}
                  />
                </section>
              )}
            </div>
            </>
          );
        }}
      </Loaded>
    </>
  );
}
