import { useEffect, useState } from 'preact/hooks';
import { getTraceContext } from '../api/endpoints.js';
import type { Span, TraceContextBundle, TraceIssueOccurrence, TraceStats } from '../api/types.js';
import { Conversation } from '../components/conversation.js';
import { CostValue } from '../components/cost-summary.js';
import { Link } from '../components/link.js';
import { Stat } from '../components/stat.js';
import { ErrorPanel, Loaded, Loading } from '../components/states.js';
import { StatusBadge } from '../components/status-badge.js';
import { Waterfall } from '../components/waterfall.js';
import { formatCount, formatDateTime, formatMs, formatNumber } from '../format.js';
import { useResource } from '../use-resource.js';

/** Spans per page of the context bundle (the API allows 1..500). */
export const SPAN_PAGE = 100;

function show(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** What estimated_cost_basis says about the figure (docs/cost.md "Stored cost"). */
const COST_BASIS: Record<string, string> = {
  stored: 'every model priced',
  partial: 'lower bound: some models unpriced',
  unpriced: 'no model has a public price',
  unavailable: 'no prices when processed',
  pending: 'not processed yet',
};

function TraceHeader({ trace, stats }: { trace: TraceContextBundle['trace']; stats: TraceStats }) {
  return (
    <>
      <dl class="stat-grid" data-testid="trace-stats">
        <Stat label="Duration" testId="trace-duration">
          {formatMs(trace.total_duration_ms)}
        </Stat>
        <Stat label="Spans" testId="trace-spans">
          {formatCount(stats.span_count)}
        </Stat>
        <Stat label="Tokens" testId="trace-tokens">
          {formatCount(stats.total_tokens)}
        </Stat>
        <Stat label="Failed spans" testId="trace-errors" note="spans with an error status" hint="Spans of this trace (model calls, tools, the root) that ended with an error status">
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
      <dl class="facts">
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
            <Link href={`/p/${trace.project_id}/traces?thread_id=${encodeURIComponent(trace.thread_id)}`}>
              {trace.thread_id} ({formatCount(trace.thread_trace_count)} traces)
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
      {(trace.agent_input !== null && trace.agent_input !== undefined) || (trace.agent_output !== null && trace.agent_output !== undefined) ? (
        <div class="io-grid">
          <details open>
            <summary>Agent input</summary>
            <Conversation value={trace.agent_input ?? trace.agent_input_display} defaultRole="user" testId="agent-input" />
          </details>
          <details open>
            <summary>Agent output</summary>
            {trace.agent_output === null || trace.agent_output === undefined ? <p class="muted">—</p> : <Conversation value={trace.agent_output} defaultRole="assistant" testId="agent-output" />}
          </details>
        </div>
      ) : null}
      {trace.tool_calls?.length > 0 && (
        <section class="panel">
          <h2>Tool calls</h2>
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
    </>
  );
}

/** Attributes and events of one span, fetched when opened: the bundle page of exactly that span. */
function SpanDetail({ traceId, projectId, index }: { traceId: string; projectId: string; index: number }) {
  const page = useResource(() => getTraceContext(traceId, projectId, { offset: index, limit: 1, attributes: true, events: true }), [traceId, projectId, index]);
  return (
    <Loaded resource={page} label="Loading attributes and events…">
      {(bundle) => {
        const span = bundle.spans[0];
        if (!span) return <p class="muted">This span is no longer stored.</p>;
        const attributes = Object.entries(span.attributes ?? {});
        const events = Array.isArray(span.events) ? span.events : [];
        return (
          <div data-testid="span-detail">
            <p class="muted">
              <code>{span.otel_span_id}</code> · kind {String(span.kind)} · status {span.status_code || '—'}
              {span.status_description ? `: ${span.status_description}` : ''}
              {span.tps ? ` · ${formatNumber(span.tps)} tokens/s` : ''}
            </p>
            <h3>Attributes ({attributes.length})</h3>
            {attributes.length === 0 ? (
              <p class="muted">None.</p>
            ) : (
              <table class="data-table compact kv">
                <tbody>
                  {attributes.map(([name, value]) => (
                    <tr key={name}>
                      <th scope="row">
                        <code>{name}</code>
                      </th>
                      <td>
                        <pre>{show(value)}</pre>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <h3>Events ({events.length})</h3>
            {events.length === 0 ? (
              <p class="muted">None.</p>
            ) : (
              <ol class="events">
                {events.map((event, i) => (
                  <li key={i}>
                    <pre>{show(event)}</pre>
                  </li>
                ))}
              </ol>
            )}
          </div>
        );
      }}
    </Loaded>
  );
}

function Occurrences({ occurrences, projectId }: { occurrences: TraceIssueOccurrence[]; projectId: string }) {
  if (occurrences.length === 0) return null;
  return (
    <section class="panel" data-testid="trace-occurrences">
      <h2>Issues found in this trace</h2>
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
  const bundle = pages.bundle;
  const total = bundle?.spans_total ?? 0;

  return (
    <>
      <p class="back">
        <Link href={`/p/${projectId}/traces`}>← Traces</Link>
      </p>
      {bundle && (
        <>
          <h1 data-testid="trace-title">
            {bundle.trace.agent_name || 'Trace'} {bundle.trace.has_error && <span class="badge badge-error">error</span>}
          </h1>
          <p class="muted truncate">{bundle.trace.agent_input_display}</p>
          <TraceHeader trace={bundle.trace} stats={bundle.stats} />
          <Occurrences occurrences={bundle.issue_occurrences ?? []} projectId={projectId} />
        </>
      )}
      <section class="panel">
        <h2>
          Spans{' '}
          {bundle && (
            <span class="muted" data-testid="span-count">
              ({formatCount(pages.spans.length)} of {formatCount(total)} loaded)
            </span>
          )}
        </h2>
        {pages.spans.length > 0 && (
          <Waterfall
            spans={pages.spans}
            selected={selected}
            onSelect={setSelected}
            renderDetail={(index) => <SpanDetail traceId={traceId} projectId={projectId} index={index} />}
          />
        )}
        {pages.loading && <Loading label={bundle ? 'Loading spans…' : 'Loading trace…'} />}
        {pages.error ? <ErrorPanel error={pages.error} retry={() => (bundle ? pages.loadMore() : pages.reload())} /> : null}
        {!pages.loading && bundle && pages.spans.length < total && (
          <button type="button" onClick={pages.loadMore} data-testid="load-more-spans">
            Load {formatCount(Math.min(SPAN_PAGE, total - pages.spans.length))} more spans
          </button>
        )}
      </section>
    </>
  );
}
