import { CopyButton } from './copy-button.js';

/**
 * A secret the API returns once (a new API key, a webhook signing secret): shown with a copy
 * button and a plain warning, kept only in this component's state, and gone when it is dismissed
 * or the page changes.
 */
export function SecretOnce({ label, secret, onDone }: { label: string; secret: string; onDone: () => void }) {
  return (
    <div class="notice secret-once" role="alert" data-testid="secret-once">
      <p>
        <strong>{label}</strong> — shown only now; copy it before you leave this page.
      </p>
      <p>
        <code data-testid="secret-value">{secret}</code>
      </p>
      <div class="actions">
        <CopyButton label="Copy" text={() => secret} />
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
