import type { ComponentChildren } from 'preact';

/** A labelled row of filter controls; each control writes its value into the page's query string. */
export function FilterBar({ children, label }: { children: ComponentChildren; label: string }) {
  return (
    <form class="filter-bar" role="search" aria-label={label} onSubmit={(e) => e.preventDefault()}>
      {children}
    </form>
  );
}
