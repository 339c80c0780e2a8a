import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Keyboard shortcuts, active unless the person is typing in a field:
 * `/` focuses the page's filter (the element marked data-shortcut="filter"), `j` / `k` move to the
 * next / previous row of the page's list (rows marked data-nav-row; Enter then opens it), `?` shows
 * this list, Escape closes it.
 */
export const SHORTCUTS: [string, string][] = [
  ['/', 'Focus the filter'],
  ['j', 'Next row'],
  ['k', 'Previous row'],
  ['Enter', 'Open the focused row'],
  ['?', 'Show these shortcuts'],
  ['Esc', 'Close this list'],
];

function typing(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  if (!element) return false;
  return element.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName);
}

/** The row's own link or button, what Enter opens. */
function rowTarget(row: Element): HTMLElement | null {
  return row.querySelector<HTMLElement>('a[href], button') ?? (row as HTMLElement);
}

export function moveRow(step: 1 | -1): void {
  const rows = Array.from(document.querySelectorAll('main [data-nav-row]'));
  if (rows.length === 0) return;
  const current = rows.findIndex((row) => row.contains(document.activeElement));
  const next = current === -1 ? (step === 1 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, current + step));
  const target = rowTarget(rows[next]);
  target?.focus();
  target?.scrollIntoView({ block: 'nearest' });
}

export function ShortcutHelp() {
  const [open, setOpen] = useState(false);
  const close = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.metaKey || event.ctrlKey || event.altKey) return;
      if (event.key === 'Escape' && open) {
        setOpen(false);
        return;
      }
      if (typing(event.target)) return;
      if (event.key === '?') {
        event.preventDefault();
        setOpen((was) => !was);
      } else if (event.key === '/') {
        const filter = document.querySelector<HTMLElement>('[data-shortcut="filter"]');
        if (filter) {
          event.preventDefault();
          filter.focus();
        }
      } else if (event.key === 'j' || event.key === 'k') {
        event.preventDefault();
        moveRow(event.key === 'j' ? 1 : -1);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open]);

  useEffect(() => {
    if (open) close.current?.focus();
  }, [open]);

  return (
    <>
      <button type="button" class="chip-button" aria-label="Keyboard shortcuts" aria-haspopup="dialog" data-testid="shortcuts-button" onClick={() => setOpen(true)}>
        ?
      </button>
      {open && (
        <div class="dialog-backdrop" onClick={() => setOpen(false)}>
          <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="shortcuts-title" data-testid="shortcuts-help" onClick={(e) => e.stopPropagation()}>
            <h2 id="shortcuts-title">Keyboard shortcuts</h2>
            <table class="data-table compact">
              <tbody>
                {SHORTCUTS.map(([key, what]) => (
                  <tr key={key}>
                    <th scope="row">
                      <kbd>{key}</kbd>
                    </th>
                    <td>{what}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <button type="button" ref={close} onClick={() => setOpen(false)}>
              Close
            </button>
          </div>
        </div>
      )}
    </>
  );
}
