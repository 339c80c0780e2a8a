import type { ComponentChildren } from 'preact';
import { Link } from './link.js';

const PROJECT_TABS = [
  { key: 'overview', label: 'Overview', path: '' },
  { key: 'agents', label: 'Agents', path: '/agents' },
  { key: 'models', label: 'Models', path: '/models' },
  { key: 'tools', label: 'Tools', path: '/tools' },
  { key: 'traces', label: 'Traces', path: '/traces' },
  { key: 'issues', label: 'Issues', path: '/issues' },
  { key: 'settings', label: 'Settings', path: '/settings' },
] as const;

export type ProjectTab = (typeof PROJECT_TABS)[number]['key'];

/** The window picker's parameters travel between the analytics tabs so the window stays put. */
function windowQuery(query: URLSearchParams): string {
  const keep = new URLSearchParams();
  for (const name of ['range', 'from', 'to', 'granularity']) {
    const value = query.get(name);
    if (value) keep.set(name, value);
  }
  const text = keep.toString();
  return text ? `?${text}` : '';
}

export function Layout({
  children,
  onSignOut,
  project,
  tab,
  query,
}: {
  children: ComponentChildren;
  onSignOut?: () => void;
  project?: { id: string; name: string | null };
  tab?: ProjectTab;
  query?: URLSearchParams;
}) {
  const carried = query ? windowQuery(query) : '';
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top-bar">
        <Link href="/" class="brand">
          Lookout
        </Link>
        {project && (
          <span class="crumb">
            <span aria-hidden="true">/</span>{' '}
            <Link href={`/p/${project.id}`} data-testid="project-name">
              {project.name ?? project.id}
            </Link>
          </span>
        )}
        <span class="spacer" />
        {onSignOut && (
          <button type="button" class="link-button" onClick={onSignOut}>
            Sign out
          </button>
        )}
      </header>
      {project && (
        <nav class="tabs" aria-label="Project">
          {PROJECT_TABS.map((t) => (
            <Link
              key={t.key}
              href={`/p/${project.id}${t.path}${t.key === 'traces' || t.key === 'issues' || t.key === 'settings' ? '' : carried}`}
              aria-current={tab === t.key ? 'page' : undefined}
              data-tab={t.key}
            >
              {t.label}
            </Link>
          ))}
        </nav>
      )}
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
