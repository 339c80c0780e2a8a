import { useEffect, useState } from 'preact/hooks';

/**
 * History-API routing: the service answers every HTML navigation with the app (src/dashboard), so
 * a deep link or a reload of /p/{id}/traces works. Query strings carry page state (window,
 * filters) so that a link or the back button restores a view exactly.
 */
export interface Location {
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()));

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === window.location.pathname + window.location.search) return;
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  listeners.forEach((listener) => listener());
}

/** Replaces some query parameters of the current page (empty values are dropped). */
export function setQuery(changes: Record<string, string | null | undefined>, options: { replace?: boolean } = {}): void {
  const query = new URLSearchParams(window.location.search);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === '') query.delete(name);
    else query.set(name, value);
  }
  const text = query.toString();
  navigate(window.location.pathname + (text ? `?${text}` : ''), options);
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const listener = () => setLocation(current());
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, []);
  return location;
}

/** Matches `/p/:pid/traces/:tid`-style patterns; returns the named segments or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i += 1) {
    if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(have[i]);
    else if (want[i] !== have[i]) return null;
  }
  return params;
}

/** Plain left clicks on in-app links route without a page load; modified clicks open tabs as usual. */
export function onLinkClick(event: MouseEvent, href: string): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(href);
  window.scrollTo(0, 0);
}
