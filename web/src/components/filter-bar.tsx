import type { ComponentChildren } from 'preact';
import { AppliedInput } from './applied-input.js';

/** A labelled row of filter controls; each control writes its value into the page's query string. */
export function FilterBar({ children, label }: { children: ComponentChildren; label: string }) {
  return (
    <form class="filter-bar" role="search" aria-label={label} onSubmit={(e) => e.preventDefault()}>
      {children}
    </form>
  );
}

/**
 * Two number fields, "from" and "to" (both inclusive, either may stay empty), written into the query
 * string under the API's parameter names, e.g. min_duration_ms and max_duration_ms.
 */
export function RangeFilter<Name extends string>({
  label,
  names,
  filters,
  onApply,
}: {
  label: string;
  names: [Name, Name];
  filters: Partial<Record<Name, string>>;
  onApply: (name: Name, value: string | null) => void;
}) {
  const [low, high] = names;
  return (
    <div class="inline-field range-field" role="group" aria-label={label}>
      <span aria-hidden="true">{label}</span>
      <AppliedInput type="number" min={0} step="any" class="range-input" aria-label={`${label} from`} placeholder="from" value={filters[low] ?? ''} onApply={(v) => onApply(low, v)} data-testid={`filter-${low}`} />
      <span aria-hidden="true">–</span>
      <AppliedInput type="number" min={0} step="any" class="range-input" aria-label={`${label} to`} placeholder="to" value={filters[high] ?? ''} onApply={(v) => onApply(high, v)} data-testid={`filter-${high}`} />
    </div>
  );
}

/**
 * A text filter (an exact value, e.g. a model name) with the distinct values of the page shown as
 * the browser's suggestions, written into the query string under `name`.
 */
export function SuggestedFilter({
  label,
  name,
  placeholder,
  value,
  options,
  onApply,
}: {
  label: string;
  name: string;
  placeholder: string;
  value: string | undefined;
  options: string[];
  onApply: (name: string, value: string | null) => void;
}) {
  const listId = `suggest-${name}`;
  return (
    <label class="inline-field">
      {label}{' '}
      <AppliedInput value={value ?? ''} placeholder={placeholder} list={listId} maxLength={200} onApply={(v) => onApply(name, v)} data-testid={`filter-${name}`} />
      <datalist id={listId}>
        {[...new Set(options.filter((o) => o !== ''))].sort().map((o) => (
          <option key={o} value={o} />
        ))}
      </datalist>
    </label>
  );
}
