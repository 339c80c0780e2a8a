import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { listProjects } from '../api/endpoints.js';
import { setApiKey } from '../session.js';

/**
 * Sign-in checks the key against GET /api/projects before keeping it, so a wrong key is reported
 * here rather than on the first page. The key goes to sessionStorage only.
 */
export function SignIn({ onSignedIn, notice }: { onSignedIn: () => void; notice?: string | null }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const trimmed = key.trim();
    if (!trimmed) {
      setError('Enter an API key.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await listProjects(trimmed);
      setApiKey(trimmed);
      onSignedIn();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setError('That API key was not accepted. Check that it is complete and has not been revoked.');
      else if (e instanceof ApiError && e.status === 403) setError('That key cannot read projects (an ingest-only key?). Use a key with read or admin scope.');
      else setError(e instanceof ApiError ? e.detail : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <form class="panel sign-in-form" onSubmit={(event) => void submit(event)} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Lookout</h1>
        <p>Sign in with an API key (read or admin scope). It is kept in this tab's session storage only and forgotten when the tab closes.</p>
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="lk_…"
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'sign-in-error' : undefined}
          autoFocus
        />
        {error && (
          <p id="sign-in-error" class="field-error" role="alert" data-testid="sign-in-error">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
