import { useEffect, useState } from 'preact/hooks';
import { getTraceContext } from '../api/endpoints.js';
import type { Span, TraceContextBundle, TraceIssueOccurrence, TraceStats } from '../api/types.js';
import { Conversation } from '../components/conversation.js';
import { CopyButton } from '../components/copy-button.js';
import { CostValue } from '../components/cost-summary.js';
import { Link } from '../components/link.js';
import { Stat } from '../components/stat.js';
import { ErrorPanel, Loaded, Loading } from '../components/states.js';
import { StatusBadge } from '../components/status-badge.js';
import { Waterfall } from '../components/waterfall.js';
import { SpanDetailView } from '../components/span-detail.js';
import { threadHref } from './thread.js';
import { formatCount, formatDateTime, formatMs } from '../format.js';
import { useResource } from '../use-resource.js';

/** Spans per page of the context bundle (the API allows 1..500). */
export const SPAN_PAGE = 100;

/** What estimated_cost_basis says about the figure (docs/cost.md "Stored cost"). */
const COST_BASIS: Record<string, string> = {
  stored: 'every model priced',
  partial: 'lower bound: some models unpriced',
  unpriced: 'no model has a public price',
  unavailable: 'no prices when processed',
  pending: 'not processed yet',
};

/** The run's summary, compact above the tree: what it was, how long, how big, what it cost. */
function TraceSummary({ trace, stats }: { trace: TraceContextBundle['trace']; stats: TraceStats }) {
  return (
    <>
      <dl class="stat-grid compact" data-testid="trace-stats">
        <Stat label="Duration" testId="trace-duration">
          {formatMs(trace.total_duration_ms)}
        </Stat>
        <Stat label="Spans" testId="trace-spans">
          {formatCount(stats.span_count)}
        </Stat>
        <Stat label="Tokens" testId="trace-tokens">
          {formatCount(stats.total_tokens)}
        </Stat>
        <Stat label="Failed spans" testId="trace-errors" hint="Spans of this trace (model calls, tools, the root) that ended with an error status">
          {formatCount(stats.error_count)}
        </Stat>
        <Stat label="Estimated cost" testId="trace-cost" note={COST_BASIS[trace.estimated_cost_basis] ?? trace.estimated_cost_basis} hint="Observed tokens × public list prices, stored when the trace was processed; not an invoice">
          <CostValue value={trace.estimated_cost_usd} lowerBound={trace.estimated_cost_basis === 'partial'} />
        </Stat>
      </dl>
      {trace.cost_unpriced_models?.length > 0 && (
        <p class="muted" data-testid="trace-unpriced-models">
          No public price for {trace.cost_unpriced_models.map((m, i) => (
            <>
              {i > 0 && ', '}
              <code key={m}>{m}</code>
            </>
          ))}
          : the cost counts the other models only.
        </p>
      )}
    </>
  );
}

/** The run as a whole, shown beside the tree while no span is selected: input, output, tool calls, facts. */
function RunDetail({ trace, stats, occurrences }: { trace: TraceContextBundle['trace']; stats: TraceStats; occurrences: TraceIssueOccurrence[] }) {
  return (
    <div data-testid="run-detail">
      <h2 class="detail-title">Run</h2>
      <p class="muted detail-hint">Select a span for its prompt, completion, tool call, attributes and errors.</p>
      <Occurrences occurrences={occurrences} projectId={trace.project_id} />
      {trace.content_expired && (
        <p class="muted" data-testid="content-expired">
          Content expired: this run is older than the project keeps inputs, outputs and attributes (project settings, Retention). Its figures remain.
        </p>
      )}
      {(trace.agent_input !== null && trace.agent_input !== undefined) || (trace.agent_output !== null && trace.agent_output !== undefined) ? (
        <>
          <section class="detail-block">
            <h3>Agent input</h3>
            <Conversation value={trace.agent_input ?? trace.agent_input_display} defaultRole="user" testId="agent-input" />
          </section>
          <section class="detail-block">
            <h3>Agent output</h3>
            {trace.agent_output === null || trace.agent_output === undefined ? <p class="muted">—</p> : <Conversation value={trace.agent_output} defaultRole="assistant" testId="agent-output" />}
          </section>
        </>
      ) : null}
      {trace.tool_calls?.length > 0 && (
        <section class="detail-block">
          <h3>Tool calls</h3>
          <ul class="tool-calls" data-testid="tool-calls">
            {trace.tool_calls.map((call) => (
              <li key={call.span_id} class={call.is_error ? 'tool-error' : undefined}>
                <code>{call.name}</code> · {formatMs(call.duration_ms)}
                {call.is_error && <span class="badge badge-error">error</span>}
                {call.user_facing_message && (
                  <p class="muted">
                    {call.user_facing_message}
                    {call.user_facing_message_truncated ? '…' : ''}
                    {call.user_facing_messages_omitted ? ` (+${call.user_facing_messages_omitted} more)` : ''}
                  </p>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      <section class="detail-block">
        <h3>Facts</h3>
        <dl class="facts compact-facts">
          <dt>Agent</dt>
          <dd data-testid="trace-agent">{trace.agent_name || '—'}</dd>
          <dt>Service</dt>
          <dd>{trace.service_name || '—'}</dd>
          <dt>Release</dt>
          <dd>{trace.release || '—'}</dd>
          <dt>Time</dt>
          <dd>{formatDateTime(trace.timestamp)}</dd>
          <dt>Thread</dt>
          <dd>
            {trace.thread_id ? (
              <Link href={threadHref(trace.project_id, trace.thread_id)} data-testid="trace-thread">
                {trace.thread_id} ({formatCount(trace.thread_trace_count)} runs)
              </Link>
            ) : (
              '—'
            )}
          </dd>
          <dt>Models</dt>
          <dd>{stats.models_used?.length ? stats.models_used.map((m) => <code key={m}>{m} </code>) : '—'}</dd>
          <dt>OTel trace id</dt>
          <dd>
            <code>{trace.otel_trace_id}</code>
          </dd>
          {trace.issue_extraction && (
            <>
              <dt>Issue extraction</dt>
              <dd>
                {trace.issue_extraction.status}
                {trace.issue_extraction.reason ? ` (${trace.issue_extraction.reason})` : ''} · {formatCount(trace.issue_extraction.issue_count)} issues,{' '}
                {formatCount(trace.issue_extraction.occurrence_count)} occurrences
              </dd>
            </>
          )}
        </dl>
      </section>
    </div>
  );
}

/** The selected span's attributes and events: the bundle page of exactly that span. */
function SpanDetail({ traceId, projectId, index, onClose }: { traceId: string; projectId: string; index: number; onClose: () => void }) {
  const page = useResource(() => getTraceContext(traceId, projectId, { offset: index, limit: 1, attributes: true, events: true }), [traceId, projectId, index]);
  return (
    <>
      <button type="button" class="link-button detail-close" onClick={onClose} data-testid="span-detail-close">
        ← Run
      </button>
      <Loaded resource={page} label="Loading the span…">
        {(bundle) => (bundle.spans[0] ? <SpanDetailView span={bundle.spans[0]} /> : <p class="muted">This span is no longer stored.</p>)}
      </Loaded>
    </>
  );
}

function Occurrences({ occurrences, projectId }: { occurrences: TraceIssueOccurrence[]; projectId: string }) {
  if (occurrences.length === 0) return null;
  return (
    <section class="detail-block" data-testid="trace-occurrences">
      <h3>Issues found in this trace</h3>
      <ul class="plain-list">
        {occurrences.map((o) => (
          <li key={`${o.issue_id}-${o.span_id}`}>
            <StatusBadge status={o.issue_status as never} /> <Link href={`/p/${projectId}/issues/${o.issue_id}`}>{o.issue_title}</Link>{' '}
            <span class="muted">
              at span <code>{o.span_id}</code>, {formatDateTime(o.occurred_at)}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The waterfall's spans, loaded a bundle page at a time without attributes or events. */
function useSpanPages(traceId: string, projectId: string) {
  const [spans, setSpans] = useState<Span[]>([]);
  const [bundle, setBundle] = useState<TraceContextBundle | null>(null);
  const [state, setState] = useState<{ loading: boolean; error: unknown }>({ loading: true, error: null });

  const load = (offset: number) => {
    setState({ loading: true, error: null });
    getTraceContext(traceId, projectId, { offset, limit: SPAN_PAGE, attributes: false, events: false }).then(
      (page) => {
        setBundle(page);
        setSpans((previous) => (offset === 0 ? page.spans : [...previous, ...page.spans]));
        setState({ loading: false, error: null });
      },
      (error) => setState({ loading: false, error }),
    );
  };
  useEffect(() => {
    setSpans([]);
    setBundle(null);
    load(0);
  }, [traceId, projectId]);
  return { spans, bundle, ...state, loadMore: () => load(spans.length), reload: () => load(0) };
}

export function TracePage({ projectId, traceId }: { projectId: string; traceId: string }) {
  const pages = useSpanPages(traceId, projectId);
  const [selected, setSelected] = useState<number | null>(null);
  // Another trace opened in place (j/k, a link in the detail) starts with the run selected.
  useEffect(() => setSelected(null), [traceId]);
  const bundle = pages.bundle;
  const total = bundle?.spans_total ?? 0;

  return (
    <>
      <p class="back">
        <Link href={`/p/${projectId}/traces`}>← Traces</Link>
      </p>
      {bundle && (
        <div class="trace-head">
          <h1 data-testid="trace-title">
            {bundle.trace.agent_name || 'Trace'} {bundle.trace.has_error && <span class="badge badge-error">error</span>}
            <span class="trace-time muted">{formatDateTime(bundle.trace.timestamp)}</span>
            <span class="trace-share">
              <CopyButton label="Copy link" text={() => window.location.href} testId="copy-link" />
              <CopyButton label="Copy trace id" text={() => bundle.trace.otel_trace_id} />
            </span>
          </h1>
          <TraceSummary trace={bundle.trace} stats={bundle.stats} />
        </div>
      )}
      <div class="trace-split">
        <section class="panel trace-tree" aria-labelledby="spans-title" data-testid="span-tree">
          <h2 id="spans-title">
            Spans{' '}
            {bundle && (
              <span class="muted" data-testid="span-count">
                ({formatCount(pages.spans.length)} of {formatCount(total)} loaded)
              </span>
            )}
          </h2>
          {pages.spans.length > 0 && <Waterfall key={traceId} spans={pages.spans} selected={selected} onSelect={setSelected} />}
          {pages.loading && <Loading label={bundle ? 'Loading spans…' : 'Loading trace…'} />}
          {pages.error ? <ErrorPanel error={pages.error} retry={() => (bundle ? pages.loadMore() : pages.reload())} /> : null}
          {!pages.loading && bundle && pages.spans.length < total && (
            <button type="button" onClick={pages.loadMore} data-testid="load-more-spans">
              Load {formatCount(Math.min(SPAN_PAGE, total - pages.spans.length))} more spans
            </button>
          )}
        </section>
        {bundle && (
          <aside class="panel trace-detail" aria-label={selected === null ? 'Run detail' : 'Span detail'}>
            {selected === null ? (
              <RunDetail trace={bundle.trace} stats={bundle.stats} occurrences={bundle.issue_occurrences ?? []} />
            ) : (
              <SpanDetail traceId={traceId} projectId={projectId} index={selected} onClose={() => setSelected(null)} />
            )}
          </aside>
        )}
      </div>
    </>
  );
}
