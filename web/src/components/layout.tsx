import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { setThemeChoice, themeChoice, useAppearance } from '../appearance.js';
import { setAutoRefresh, useLiveRefresh, REFRESH_SECONDS } from '../live-refresh.js';
import { setZoneMode } from '../time-zone.js';
import { Link } from './link.js';
import { ShortcutHelp } from './shortcuts.js';

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
  const { zone } = useAppearance();
  const live = useLiveRefresh();
  const tabs = useRef<HTMLElement>(null);
  // On a phone the tab bar scrolls: bring the current tab into view.
  useEffect(() => {
    const current = tabs.current?.querySelector<HTMLElement>('[aria-current="page"]');
    if (current && tabs.current && tabs.current.scrollWidth > tabs.current.clientWidth) {
      tabs.current.scrollLeft = current.offsetLeft - tabs.current.clientWidth / 2 + current.offsetWidth / 2;
    }
  }, [tab]);
  const nextTheme = themeChoice() === 'system' ? (document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark') : themeChoice() === 'dark' ? 'light' : 'dark';
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
          <Link href="/admin" class="admin-link" data-testid="admin-link">
            Admin
          </Link>
        )}
        <div class="top-controls">
          <button
            type="button"
            class="chip-button"
            data-testid="zone-toggle"
            aria-label={zone === 'utc' ? 'Times in UTC; switch to local time' : 'Times in local time; switch to UTC'}
            onClick={() => setZoneMode(zone === 'utc' ? 'local' : 'utc')}
          >
            {zone === 'utc' ? 'UTC' : 'Local'}
          </button>
          <button type="button" class="chip-button" data-testid="theme-toggle" aria-label={`Switch to ${nextTheme} mode`} onClick={() => setThemeChoice(nextTheme)}>
            {document.documentElement.dataset.theme === 'dark' ? 'Dark' : 'Light'}
          </button>
          {project && (
            <button
              type="button"
              class="chip-button"
              data-testid="live-toggle"
              aria-pressed={live.enabled}
              title={`Reload the page's figures every ${REFRESH_SECONDS} s`}
              onClick={() => setAutoRefresh(!live.enabled)}
            >
              {live.enabled ? `Live · ${REFRESH_SECONDS} s` : 'Live off'}
            </button>
          )}
          <ShortcutHelp />
        </div>
        {onSignOut && (
          <button type="button" class="link-button" onClick={onSignOut}>
            Sign out
          </button>
        )}
      </header>
      {project && (
        <nav class="tabs" aria-label="Project" ref={tabs}>
          {PROJECT_TABS.map((t) => (
            <Link
              key={t.key}
              href={`/p/${project.id}${t.path}${t.key === 'traces' || t.key === 'issues' ? '' : carried}`}
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
