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

/** Parent links among the spans loaded so far (a parent not loaded yet makes the span a root). */
function treeOf(spans: Span[]): { depth: Map<string, number>; parent: Map<string, string | null>; hasChildren: Set<string> } {
  const parentOf = new Map(spans.map((s) => [s.otel_span_id, s.parent_otel_span_id]));
  const parent = new Map<string, string | null>();
  const hasChildren = new Set<string>();
  for (const span of spans) {
    const p = span.parent_otel_span_id && parentOf.has(span.parent_otel_span_id) ? span.parent_otel_span_id : null;
    parent.set(span.otel_span_id, p);
    if (p) hasChildren.add(p);
  }
  const depth = new Map<string, number>();
  const depthOf = (id: string, guard = 0): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    const p = parent.get(id);
    const d = p && guard < 64 ? depthOf(p, guard + 1) + 1 : 0;
    depth.set(id, d);
    return d;
  };
  for (const span of spans) depthOf(span.otel_span_id);
  return { depth, parent, hasChildren };
}

export function isErrorSpan(span: Span): boolean {
  const code = String(span.status_code).toUpperCase();
  return code === 'ERROR' || code === 'STATUS_CODE_ERROR' || code === '2';
}

/** What the bar colours mean (the ingest mapping's span classes, and the error status over them). */
const LEGEND: [string, string][] = [
  ['class-generation', 'Model call'],
  ['class-tool', 'Tool call'],
  ['class-other', 'Other span'],
  ['class-error', 'Failed span'],
];

const RULER_STEPS = [0, 0.25, 0.5, 0.75, 1];

/**
 * The span tree with its waterfall: one row per span, indented under its parent, bars placed on
 * the trace's own clock (start/end ns from the API) under a time ruler. The bar geometry and the
 * ruler's marks are layout; every figure in a row is the API's (duration_ms, tokens, model).
 * Rows are buttons: Up/Down move, Enter or a click selects the span (its detail is shown beside
 * the tree), Left/Right or the caret collapse and expand a span's children.
 */
export function Waterfall({ spans, selected, onSelect }: { spans: Span[]; selected: number | null; onSelect: (index: number | null) => void }) {
  const [focusIndex, setFocusIndex] = useState(0);
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  if (spans.length === 0) return <p class="muted">This trace has no spans.</p>;
  const starts = spans.map((s) => ns(s.start_time_ns));
  const ends = spans.map((s) => ns(s.end_time_ns));
  const origin = starts.reduce((a, b) => (b < a ? b : a));
  const finish = ends.reduce((a, b) => (b > a ? b : a));
  const total = finish - origin > 0n ? finish - origin : 1n;
  const totalMs = Number(total) / 1e6;
  const { depth, parent, hasChildren } = treeOf(spans);
  const pct = (value: bigint) => Number(((value - origin) * 10000n) / total) / 100;

  const hidden = (id: string): boolean => {
    for (let p = parent.get(id), guard = 0; p && guard < 64; p = parent.get(p), guard += 1) if (collapsed.has(p)) return true;
    return false;
  };
  const visible = spans.map((s, index) => ({ span: s, index })).filter(({ span }) => !hidden(span.otel_span_id));
  const toggle = (id: string, collapse?: boolean) =>
    setCollapsed((previous) => {
      const next = new Set(previous);
      if (collapse ?? !next.has(id)) next.add(id);
      else next.delete(id);
      return next;
    });

  const focusRow = (index: number) => {
    setFocusIndex(index);
    document.querySelector<HTMLElement>(`[data-span-index="${index}"]`)?.focus();
  };
  const onKey = (event: KeyboardEvent, index: number) => {
    const id = spans[index].otel_span_id;
    const position = visible.findIndex((row) => row.index === index);
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      const next = visible[position + (event.key === 'ArrowDown' ? 1 : -1)];
      if (!next) return;
      event.preventDefault();
      focusRow(next.index);
    } else if (event.key === 'ArrowRight' && hasChildren.has(id)) {
      event.preventDefault();
      toggle(id, false);
    } else if (event.key === 'ArrowLeft') {
      event.preventDefault();
      if (hasChildren.has(id) && !collapsed.has(id)) toggle(id, true);
      else {
        const up = parent.get(id);
        const upIndex = up ? spans.findIndex((s) => s.otel_span_id === up) : -1;
        if (upIndex >= 0) focusRow(upIndex);
      }
    }
  };

  return (
    <div class="span-tree">
      <ul class="span-legend" aria-label="Bar colours">
        {LEGEND.map(([cls, label]) => (
          <li key={cls}>
            <span class={`legend-swatch ${cls}`} aria-hidden="true" /> {label}
          </li>
        ))}
      </ul>
      <div class="span-ruler" aria-hidden="true" data-testid="span-ruler">
        <span class="span-ruler-label">Span</span>
        <span class="span-ruler-track">
          {RULER_STEPS.map((f) => (
            <span key={f} class="span-ruler-mark" style={{ left: `${f * 100}%` }}>
              {formatMs(totalMs * f)}
            </span>
          ))}
        </span>
        <span class="span-ruler-duration">Duration</span>
      </div>
      <ol class="waterfall" data-testid="waterfall" aria-label="Spans">
        {visible.map(({ span, index }) => {
          const id = span.otel_span_id;
          const left = pct(starts[index]);
          const width = Math.max(pct(ends[index]) - left, 0.3);
          const error = isErrorSpan(span);
          const open = selected === index;
          const parentOfChildren = hasChildren.has(id);
          const isCollapsed = collapsed.has(id);
          return (
            <li key={id} class={`span-row${error ? ' span-error' : ''}${open ? ' span-open' : ''}`}>
              <button
                type="button"
                class="span-button"
                data-span-index={index}
                data-span-id={id}
                aria-pressed={open}
                aria-expanded={parentOfChildren ? !isCollapsed : undefined}
                tabIndex={index === focusIndex ? 0 : -1}
                onFocus={() => setFocusIndex(index)}
                onKeyDown={(e) => onKey(e, index)}
                onClick={() => onSelect(open ? null : index)}
              >
                <span class="span-label" style={{ paddingLeft: `${Math.min(depth.get(id) ?? 0, 12) * 0.9}rem` }}>
                  <span class="span-name">
                    {parentOfChildren ? (
                      <span
                        class="span-caret"
                        data-testid="span-caret"
                        title={isCollapsed ? 'Expand' : 'Collapse'}
                        onClick={(e) => {
                          e.stopPropagation();
                          toggle(id);
                        }}
                      >
                        {isCollapsed ? '▸' : '▾'}
                      </span>
                    ) : (
                      <span class="span-caret span-caret-leaf" aria-hidden="true" />
                    )}
                    {span.name}
                  </span>
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
            </li>
          );
        })}
      </ol>
    </div>
  );
}
