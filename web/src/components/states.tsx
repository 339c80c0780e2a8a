import type { ComponentChildren } from 'preact';
import { ApiError, describeError } from '../api/client.js';
import type { Resource } from '../use-resource.js';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

/**
 * Asking again helps after a network failure or a server error, not after an answer about the
 * request itself (not found, not allowed, invalid): those get no "Try again" button.
 */
function retryable(error: unknown): boolean {
  return !(error instanceof ApiError) || error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;
}

export function ErrorPanel({ error, retry }: { error: unknown; retry?: () => void }) {
  const code = error instanceof ApiError ? error.code : null;
  return (
    <div class="state state-error" role="alert" data-error-code={code ?? undefined}>
      <p>{describeError(error)}</p>
      {retry && retryable(error) && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="state state-empty">{children}</div>;
}

/** Renders a resource's loading and error states, and its data through `children` once it is there. */
export function Loaded<T>({ resource, children, label }: { resource: Resource<T>; children: (data: T) => ComponentChildren; label?: string }) {
  if (resource.state === 'error' && resource.data === undefined) return <ErrorPanel error={resource.error} retry={resource.reload} />;
  if (resource.data === undefined) return <Loading label={label} />;
  return (
    <>
      {resource.state === 'error' && <ErrorPanel error={resource.error} retry={resource.reload} />}
      <div class={resource.state === 'loading' ? 'is-refreshing' : undefined} aria-busy={resource.state === 'loading'}>
        {children(resource.data)}
      </div>
    </>
  );
}
