import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

export interface Column<Row> {
  key: string;
  label: string;
  /** The value sorted on: the API's own figure for the cell. */
  value: (row: Row) => string | number | boolean | null | undefined;
  render?: (row: Row) => ComponentChildren;
  numeric?: boolean;
  title?: string;
}

type Direction = 'asc' | 'desc';

function compare(a: unknown, b: unknown): number {
  const missingA = a === null || a === undefined || a === '';
  const missingB = b === null || b === undefined || b === '';
  if (missingA || missingB) return missingA === missingB ? 0 : missingA ? 1 : -1;
  const na = typeof a === 'number' ? a : Number(a);
  const nb = typeof b === 'number' ? b : Number(b);
  if (Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
  return (typeof a === 'string' ? a : JSON.stringify(a)).localeCompare(typeof b === 'string' ? b : JSON.stringify(b));
}

/**
 * A table whose headers are buttons: click or Enter/Space sorts by that column, again to reverse.
 * Sorting orders the API's rows; it never changes a figure. Missing values sort last either way.
 */
export function SortableTable<Row>({
  columns,
  rows,
  rowKey,
  initialSort,
  caption,
  testId,
  sort: controlledSort,
  onSort,
  navRows = false,
}: {
  columns: Column<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
  initialSort?: { key: string; direction: Direction };
  caption?: string;
  testId?: string;
  /** A sort kept by the page (in its URL, say) instead of by the table. */
  sort?: { key: string; direction: Direction };
  onSort?: (sort: { key: string; direction: Direction }) => void;
  /** Rows take part in the j/k shortcuts. */
  navRows?: boolean;
}) {
  const [ownSort, setOwnSort] = useState<{ key: string; direction: Direction } | null>(initialSort ?? null);
  const sort = controlledSort ?? ownSort;
  const column = sort ? columns.find((c) => c.key === sort.key) : undefined;
  const sorted = column
    ? [...rows].sort((x, y) => {
        const a = column.value(x);
        const b = column.value(y);
        const missing = (v: unknown) => v === null || v === undefined || v === '';
        if (missing(a) || missing(b)) return compare(a, b);
        return sort!.direction === 'asc' ? compare(a, b) : compare(b, a);
      })
    : rows;

  const toggle = (key: string) => {
    const next: { key: string; direction: Direction } =
      sort && sort.key === key ? { key, direction: sort.direction === 'asc' ? 'desc' : 'asc' } : { key, direction: columns.find((c) => c.key === key)?.numeric ? 'desc' : 'asc' };
    if (onSort) onSort(next);
    else setOwnSort(next);
  };

  return (
    <div class="table-wrap">
      <table class="data-table card-table" data-testid={testId}>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => {
              const active = sort?.key === c.key;
              const ariaSort = active ? (sort.direction === 'asc' ? 'ascending' : 'descending') : 'none';
              return (
                <th key={c.key} scope="col" aria-sort={ariaSort} class={c.numeric ? 'num' : undefined} title={c.title}>
                  <button type="button" class="sort-button" onClick={() => toggle(c.key)} data-column={c.key}>
                    {c.label}
                    <span class="sort-mark" aria-hidden="true">
                      {active ? (sort.direction === 'asc' ? ' ▲' : ' ▼') : ''}
                    </span>
                  </button>
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {sorted.map((row) => (
            <tr key={rowKey(row)} data-row-key={rowKey(row)} data-nav-row={navRows ? '' : undefined}>
              {columns.map((c) => (
                <td key={c.key} class={c.numeric ? 'num' : undefined} data-column={c.key} data-label={c.label}>
                  {c.render ? c.render(row) : String(c.value(row) ?? '—')}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
