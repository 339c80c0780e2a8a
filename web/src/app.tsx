import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { onUnauthorized } from './api/client.js';
import { getProject } from './api/endpoints.js';
import { Layout, type ProjectTab } from './components/layout.js';
import { Link } from './components/link.js';
import { ErrorPanel, Loading } from './components/states.js';
import { AdminPage } from './pages/admin.js';
import { AgentsPage } from './pages/agents.js';
import { IssuePage } from './pages/issue.js';
import { IssuesPage } from './pages/issues.js';
import { ModelsPage } from './pages/models.js';
import { OverviewPage } from './pages/overview.js';
import { ProjectsPage } from './pages/projects.js';
import { SettingsPage } from './pages/settings.js';
import { SignIn } from './pages/sign-in.js';
import { ToolsPage } from './pages/tools.js';
import { TracePage } from './pages/trace.js';
import { TracesPage } from './pages/traces.js';
import { ThreadPage } from './pages/thread.js';
import { match, navigate, useLocation } from './router.js';
import { clearApiKey, getApiKey } from './session.js';
import { readWindow } from './time-window.js';
import { useLiveRefresh } from './live-refresh.js';
import { useAppearance } from './appearance.js';
import { useResource } from './use-resource.js';

interface Route {
  tab: ProjectTab;
  title: string;
  render: (params: Record<string, string>, query: URLSearchParams) => ComponentChildren;
}

/**
 * A preset window ends at the next whole minute from when the page was opened. It is fixed per
 * location: a re-render that happens after a minute boundary (the project name arriving, say) must
 * not move the window under panels already loaded for it.
 */
function WindowedPage({ Page, projectId, query }: { Page: typeof OverviewPage; projectId: string; query: URLSearchParams }) {
  const search = query.toString();
  // An auto-refresh moves a preset window to the current minute.
  const { generation } = useLiveRefresh();
  const window = useMemo(() => readWindow(query), [search, generation]);
  return <Page projectId={projectId} window={window} customActive={query.get('range') === 'custom'} />;
}

function windowed(Page: typeof OverviewPage) {
  return (params: Record<string, string>, query: URLSearchParams) => <WindowedPage Page={Page} projectId={params.pid} query={query} />;
}

const PROJECT_ROUTES: [string, Route][] = [
  ['/p/:pid', { tab: 'overview', title: 'Overview', render: windowed(OverviewPage) }],
  ['/p/:pid/agents', { tab: 'agents', title: 'Agents', render: windowed(AgentsPage) }],
  ['/p/:pid/models', { tab: 'models', title: 'Models', render: windowed(ModelsPage) }],
  ['/p/:pid/tools', { tab: 'tools', title: 'Tools', render: windowed(ToolsPage) }],
  ['/p/:pid/traces', { tab: 'traces', title: 'Traces', render: (p, q) => <TracesPage projectId={p.pid} query={q} /> }],
  ['/p/:pid/traces/:tid', { tab: 'traces', title: 'Trace', render: (p) => <TracePage projectId={p.pid} traceId={p.tid} /> }],
  ['/p/:pid/threads/:thread', { tab: 'traces', title: 'Thread', render: (p) => <ThreadPage projectId={p.pid} threadId={p.thread} /> }],
  ['/p/:pid/issues', { tab: 'issues', title: 'Issues', render: (p, q) => <IssuesPage projectId={p.pid} query={q} /> }],
  ['/p/:pid/issues/:iid', { tab: 'issues', title: 'Issue', render: (p) => <IssuePage projectId={p.pid} issueId={p.iid} /> }],
  ['/p/:pid/settings', { tab: 'settings', title: 'Settings', render: (p) => <SettingsPage projectId={p.pid} /> }],
];

function ProjectShell({ params, route, query, onSignOut }: { params: Record<string, string>; route: Route; query: URLSearchParams; onSignOut: () => void }) {
  const project = useResource(() => getProject(params.pid), [params.pid]);
  const name = project.data?.name ?? null;
  useEffect(() => {
    document.title = `${route.title}${name ? ` · ${name}` : ''} · Lookout`;
  }, [route.title, name]);
  return (
    <Layout project={{ id: params.pid, name }} tab={route.tab} query={query} onSignOut={onSignOut}>
      {/* The page's own requests wait for the project: an unknown project fires none of them. */}
      {project.data ? route.render(params, query) : project.state === 'error' ? <ErrorPanel error={project.error} retry={project.reload} /> : <Loading label="Loading project…" />}
    </Layout>
  );
}

export function App() {
  const location = useLocation();
  // A switch of time zone or theme re-renders every page from here, so every date follows it.
  useAppearance();
  const [signedIn, setSignedIn] = useState(() => getApiKey() !== null);
  const [notice, setNotice] = useState<string | null>(null);
  const lastPath = useRef(location.path);

  useEffect(
    () =>
      onUnauthorized(() => {
        setNotice('Your API key is no longer accepted. Sign in again.');
        setSignedIn(false);
      }),
    [],
  );

  // Keyboard and screen-reader users land at the new page's content after in-app navigation.
  useEffect(() => {
    if (lastPath.current === location.path) return;
    lastPath.current = location.path;
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [location.path]);

  const signOut = () => {
    clearApiKey();
    setNotice(null);
    setSignedIn(false);
    navigate('/');
  };

  if (!signedIn) {
    document.title = 'Sign in · Lookout';
    return (
      <SignIn
        notice={notice}
        onSignedIn={() => {
          setNotice(null);
          setSignedIn(true);
        }}
      />
    );
  }

  if (location.path === '/admin') {
    document.title = 'Administration · Lookout';
    return (
      <Layout onSignOut={signOut}>
        <AdminPage />
      </Layout>
    );
  }

  if (location.path === '/' || location.path === '') {
    document.title = 'Projects · Lookout';
    return (
      <Layout onSignOut={signOut}>
        <ProjectsPage />
      </Layout>
    );
  }

  for (const [pattern, route] of PROJECT_ROUTES) {
    const params = match(pattern, location.path);
    if (params) return <ProjectShell key={params.pid} params={params} route={route} query={location.query} onSignOut={signOut} />;
  }

  document.title = 'Not found · Lookout';
  return (
    <Layout onSignOut={signOut}>
      <h1>Page not found</h1>
      <p>
        Nothing lives at <code>{location.path}</code>. <Link href="/">Back to projects</Link>.
      </p>
    </Layout>
  );
}
