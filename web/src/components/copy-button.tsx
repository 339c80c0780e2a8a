import { useState } from 'preact/hooks';

/** Copies a text (a page's link, an id) to the clipboard and says so for a moment. */
export function CopyButton({ text, label, testId }: { text: () => string; label: string; testId?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text());
      setDone(true);
      setTimeout(() => setDone(false), 1500);
    } catch {
      setDone(false);
    }
  };
  return (
    <button type="button" class="chip-light" data-testid={testId} onClick={() => void copy()} aria-live="polite">
      {done ? 'Copied' : label}
    </button>
  );
}
