import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Span } from '../api/types.js';
import { formatCount, formatMs } from '../format.js';

function ns(value: string | number): bigint {
  try {
    return BigInt(typeof value === 'number' ? Math.round(value) : value);
  } catch {
    return 0n;
  }
}

/** Nesting depth from parent links among the spans loaded so far (a parent not loaded yet counts as a root). */
function depths(spans: Span[]): Map<string, number> {
  const parentOf = new Map(spans.map((s) => [s.otel_span_id, s.parent_otel_span_id]));
  const result = new Map<string, number>();
  const depthOf = (id: string, guard = 0): number => {
    const known = result.get(id);
    if (known !== undefined) return known;
    const parent = parentOf.get(id);
    const depth = parent && parentOf.has(parent) && guard < 64 ? depthOf(parent, guard + 1) + 1 : 0;
    result.set(id, depth);
    return depth;
  };
  for (const span of spans) depthOf(span.otel_span_id);
  return result;
}

export function isErrorSpan(span: Span): boolean {
  const code = String(span.status_code).toUpperCase();
  return code === 'ERROR' || code === 'STATUS_CODE_ERROR' || code === '2';
}

/**
 * The span waterfall: one row per span, bars placed on the trace's own clock (start/end ns from the
 * API). The bar geometry is layout, not a figure; every number printed is the API's (duration_ms,
 * tokens, model). Rows are buttons: Tab/arrow keys move, Enter opens the span's attributes and events.
 */
export function Waterfall({
  spans,
  selected,
  onSelect,
  renderDetail,
}: {
  spans: Span[];
  selected: number | null;
  onSelect: (index: number | null) => void;
  renderDetail: (index: number) => ComponentChildren;
}) {
  const [focusIndex, setFocusIndex] = useState(0);
  if (spans.length === 0) return <p class="muted">This trace has no spans.</p>;
  const starts = spans.map((s) => ns(s.start_time_ns));
  const ends = spans.map((s) => ns(s.end_time_ns));
  const origin = starts.reduce((a, b) => (b < a ? b : a));
  const finish = ends.reduce((a, b) => (b > a ? b : a));
  const total = finish - origin > 0n ? finish - origin : 1n;
  const depth = depths(spans);
  const pct = (value: bigint) => Number(((value - origin) * 10000n) / total) / 100;

  const move = (event: KeyboardEvent, index: number) => {
    const next = event.key === 'ArrowDown' ? index + 1 : event.key === 'ArrowUp' ? index - 1 : null;
    if (next === null || next < 0 || next >= spans.length) return;
    event.preventDefault();
    setFocusIndex(next);
    document.querySelector<HTMLElement>(`[data-span-index="${next}"]`)?.focus();
  };

  return (
    <ol class="waterfall" data-testid="waterfall" aria-label="Spans">
      {spans.map((span, index) => {
        const left = pct(starts[index]);
        const width = Math.max(pct(ends[index]) - left, 0.3);
        const error = isErrorSpan(span);
        const open = selected === index;
        return (
          <li key={span.otel_span_id} class={`span-row${error ? ' span-error' : ''}${open ? ' span-open' : ''}`}>
            <button
              type="button"
              class="span-button"
              data-span-index={index}
              data-span-id={span.otel_span_id}
              aria-expanded={open}
              tabIndex={index === focusIndex ? 0 : -1}
              onFocus={() => setFocusIndex(index)}
              onKeyDown={(e) => move(e, index)}
              onClick={() => onSelect(open ? null : index)}
            >
              <span class="span-label" style={{ paddingLeft: `${Math.min(depth.get(span.otel_span_id) ?? 0, 12) * 0.9}rem` }}>
                <span class="span-name">{span.name}</span>
                <span class="span-meta">
                  {span.model_name && <code class="span-model">{span.model_name}</code>}
                  {(span.input_tokens > 0 || span.output_tokens > 0) && (
                    <span class="span-tokens" title="input / output tokens">
                      {formatCount(span.input_tokens)} in / {formatCount(span.output_tokens)} out
                    </span>
                  )}
                  {error && <span class="badge badge-error">error</span>}
                </span>
              </span>
              <span class="span-track" aria-hidden="true">
                <span class={`span-bar class-${span.span_class ?? 'other'}`} style={{ left: `${left}%`, width: `${width}%` }} />
              </span>
              <span class="span-duration">{formatMs(span.duration_ms)}</span>
            </button>
            {open && <div class="span-detail">{renderDetail(index)}</div>}
          </li>
        );
      })}
    </ol>
  );
}
