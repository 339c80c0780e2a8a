import { useState } from 'preact/hooks';
import { ApiError, describeError } from '../api/client.js';
import { createApiKey, createProject, listApiKeys, listProjects, revokeApiKey } from '../api/endpoints.js';
import type { ApiKey } from '../api/types.js';
import { Link } from '../components/link.js';
import { SecretOnce } from '../components/secret-once.js';
import { Loaded } from '../components/states.js';
import { formatDateTime } from '../format.js';
import { useResource } from '../use-resource.js';

/** A form's submit: busy while the call runs, the service's detail when it fails. */
function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

/** A form's submit button and the error of its last attempt. */
function SubmitRow({ label, busy, disabled, error }: { label: string; busy: boolean; disabled: boolean; error: string | null }) {
  return (
    <>
      <button type="submit" class="primary" disabled={busy || disabled}>
        {label}
      </button>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

function NewProject({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const submit = useSubmit();
  return (
    <form
      class="admin-form"
      data-testid="new-project"
      onSubmit={(e) => {
        e.preventDefault();
        void submit.run(async () => {
          await createProject(name.trim(), null);
          setName('');
          onCreated();
        });
      }}
    >
      <label class="inline-field">
        New project <input value={name} required maxLength={200} onInput={(e) => setName((e.target as HTMLInputElement).value)} data-testid="new-project-name" />
      </label>
      <SubmitRow label="Create project" busy={submit.busy} disabled={!name.trim()} error={submit.error} />
    </form>
  );
}

function NewKey({ projects, onCreated }: { projects: { id: string; name: string }[]; onCreated: (key: ApiKey) => void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<ApiKey['scope']>('read');
  const [project, setProject] = useState('');
  const submit = useSubmit();
  return (
    <form
      class="admin-form"
      data-testid="new-key"
      onSubmit={(e) => {
        e.preventDefault();
        void submit.run(async () => {
          onCreated(await createApiKey({ name: name.trim(), scope, project_id: project || null }));
          setName('');
        });
      }}
    >
      <label class="inline-field">
        Name <input value={name} required maxLength={200} onInput={(e) => setName((e.target as HTMLInputElement).value)} data-testid="new-key-name" />
      </label>
      <label class="inline-field">
        Scope{' '}
        <select value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value as ApiKey['scope'])} data-testid="new-key-scope">
          <option value="read">read</option>
          <option value="ingest">ingest</option>
          <option value="admin">admin</option>
        </select>
      </label>
      <label class="inline-field">
        Project{' '}
        <select value={project} onChange={(e) => setProject((e.target as HTMLSelectElement).value)} data-testid="new-key-project">
          <option value="">Every project</option>
          {projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <SubmitRow label="Create key" busy={submit.busy} disabled={!name.trim()} error={submit.error} />
    </form>
  );
}

function KeyRow({ apiKey, projectName, onRevoked }: { apiKey: ApiKey; projectName: string | null; onRevoked: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const submit = useSubmit();
  return (
    <tr data-row-key={apiKey.id} data-nav-row="">
      <td data-label="Name">{apiKey.name}</td>
      <td data-label="Scope">
        <code>{apiKey.scope}</code>
      </td>
      <td data-label="Project">{apiKey.project_id ? (projectName ?? <code>{apiKey.project_id}</code>) : 'Every project'}</td>
      <td data-label="Created" class="nowrap">
        {formatDateTime(apiKey.created_at)}
      </td>
      <td data-label="Last used" class="nowrap">
        {apiKey.last_used_at ? formatDateTime(apiKey.last_used_at) : 'never'}
      </td>
      <td data-label="State">
        {apiKey.revoked_at ? (
          <span class="badge badge-error">revoked {formatDateTime(apiKey.revoked_at)}</span>
        ) : confirming ? (
          <span class="actions">
            <button type="button" class="danger" disabled={submit.busy} data-testid="confirm-revoke" onClick={() =>
                void submit.run(async () => {
                  await revokeApiKey(apiKey.id);
                  onRevoked();
                })
              }
            >
              Revoke now
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </span>
        ) : (
          <button type="button" data-testid="revoke" onClick={() => setConfirming(true)}>
            Revoke…
          </button>
        )}
        {submit.error && (
          <p class="field-error" role="alert">
            {submit.error}
          </p>
        )}
      </td>
    </tr>
  );
}

/**
 * Administration of the tenant (admin scope): create projects; list API keys, create one (its
 * secret shown once) and revoke one. A key without the scope is told so and sees nothing else.
 */
export function AdminPage() {
  const keys = useResource(() => listApiKeys(), []);
  const projects = useResource(() => listProjects(), []);
  const [created, setCreated] = useState<ApiKey | null>(null);
  if (keys.state === 'error' && keys.error instanceof ApiError && keys.error.status === 403) {
    return (
      <>
        <h1>Administration</h1>
        <div class="state state-empty" data-testid="admin-needs-scope">
          <p>This page needs an API key with the admin scope. Sign out and sign in with one to manage projects and keys.</p>
        </div>
      </>
    );
  }
  const projectList = projects.data?.projects ?? [];
  const nameOf = (id: string | null) => projectList.find((p) => p.id === id)?.name ?? null;
  return (
    <>
      <h1>Administration</h1>
      <section class="panel" aria-labelledby="admin-projects">
        <h2 id="admin-projects">Projects</h2>
        <Loaded resource={projects} label="Loading projects…">
          {(data) => (
            <ul class="plain-list" data-testid="admin-projects">
              {data.projects.map((p) => (
                <li key={p.id}>
                  <Link href={`/p/${p.id}/settings`}>{p.name}</Link> <span class="muted">· webhooks and settings</span>
                </li>
              ))}
            </ul>
          )}
        </Loaded>
        <NewProject onCreated={projects.reload} />
      </section>
      <section class="panel" aria-labelledby="admin-keys">
        <h2 id="admin-keys">API keys</h2>
        {created?.key && <SecretOnce label={`New ${created.scope} key "${created.name}"`} secret={created.key} onDone={() => setCreated(null)} />}
        <NewKey
          projects={projectList}
          onCreated={(key) => {
            setCreated(key);
            keys.reload();
          }}
        />
        <Loaded resource={keys} label="Loading API keys…">
          {(data) => (
            <div class="table-wrap">
              <table class="data-table card-table" data-testid="api-keys">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Scope</th>
                    <th scope="col">Project</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">State</th>
                  </tr>
                </thead>
                <tbody>
                  {data.api_keys.map((k) => (
                    <KeyRow key={k.id} apiKey={k} projectName={nameOf(k.project_id)} onRevoked={keys.reload} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Loaded>
      </section>
    </>
  );
}
