import { getModelScorecard } from '../api/endpoints.js';
import type { ModelScorecardRow } from '../api/types.js';
import { CallLink, DrillDownNote } from '../components/call-link.js';
import { CostDetails, CostValue } from '../components/cost-summary.js';
import { SortableTable } from '../components/sortable-table.js';
import { Stat } from '../components/stat.js';
import { Empty, Loaded } from '../components/states.js';
import { WindowPicker } from '../components/window-picker.js';
import { formatCount, formatNumber, formatUsd, formatUsdColumn } from '../format.js';
import type { WindowSelection } from '../time-window.js';
import { useResource } from '../use-resource.js';

const COVERAGE: Record<string, string> = {
  all: 'the rows add up to the total',
  unwritten_only: 'rows cover only traces priced at query time; the total is complete',
  none: 'no per-model attribution for this window; the total is complete',
};

export function ModelsPage({ projectId, window, customActive }: { projectId: string; window: WindowSelection; customActive: boolean }) {
  const view = useResource(() => getModelScorecard(projectId, window), [projectId, window.start, window.endExclusive]);
  return (
    <>
      <div class="page-head">
        <h1>Model scorecard</h1>
        <WindowPicker window={window} customActive={customActive} showGranularity={false} />
      </div>
      <Loaded resource={view} label="Loading the model scorecard…">
        {(data) => (
          <>
            <dl class="stat-grid">
              <Stat label="Estimated cost" testId="models-cost">
                <CostValue value={data.estimated_cost_usd} lowerBound={data.cost_lower_bound} />
              </Stat>
              <Stat label="Total tokens" testId="models-tokens">
                {formatCount(data.total_tokens)}
              </Stat>
            </dl>
            <CostDetails cost={data} />
            <p class="muted">Per-model cost attribution: {COVERAGE[data.cost_attribution_coverage] ?? data.cost_attribution_coverage}.</p>
            {data.rows.length === 0 ? (
              <Empty>
                <p>No model calls in this window.</p>
              </Empty>
            ) : (
              <>
                <DrillDownNote what="model" counted="Traces counts those same runs; tokens and speed" />
                <SortableTable<ModelScorecardRow>
                  testId="model-scorecard"
                  rows={data.rows}
                  rowKey={(row) => row.model}
                  initialSort={{ key: 'tokens', direction: 'desc' }}
                  columns={[
                    { key: 'model', label: 'Model', value: (row) => row.model, render: (row) => <CallLink projectId={projectId} window={data.window} filter="model" name={row.model} /> },
                    { key: 'traces', label: 'Traces', value: (row) => row.traces, render: (row) => formatCount(row.traces), numeric: true },
                    { key: 'tokens', label: 'Tokens', value: (row) => row.tokens, render: (row) => formatCount(row.tokens), numeric: true },
                    { key: 'input_tokens', label: 'Input', value: (row) => row.input_tokens, render: (row) => formatCount(row.input_tokens), numeric: true },
                    { key: 'output_tokens', label: 'Output', value: (row) => row.output_tokens, render: (row) => formatCount(row.output_tokens), numeric: true },
                    {
                      key: 'avg_speed',
                      label: 'Avg tokens/s',
                      value: (row) => row.avg_speed,
                      render: (row) => formatNumber(row.avg_speed),
                      numeric: true,
                    },
                    { key: 'priced', label: 'Priced', value: (row) => (row.priced ? 'yes' : 'no'), render: (row) => (row.priced ? 'yes' : <strong>no</strong>) },
                    {
                      key: 'estimated_cost_usd',
                      label: 'Est. cost',
                      value: (row) => row.estimated_cost_usd,
                      render: (row) =>
                        row.estimated_cost_usd === null && row.priced ? (
                          <span title="Part of this model's cost was priced when its traces were written; the total above includes it">—</span>
                        ) : (
                          <span title={formatUsd(row.estimated_cost_usd)}>{formatUsdColumn(row.estimated_cost_usd)}</span>
                        ),
                      numeric: true,
                    },
                  ]}
                />
              </>
            )}
          </>
        )}
      </Loaded>
    </>
  );
}
