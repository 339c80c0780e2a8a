import { useMemo, useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import { downloadExport } from '../api/download.js';
import { getAnalyticsCatalog } from '../api/endpoints.js';
import { formatDateTime } from '../format.js';
import { useLocation } from '../router.js';
import { readWindow } from '../time-window.js';
import { useResource } from '../use-resource.js';
import { WindowPicker } from './window-picker.js';

const FORMATS = [
  { value: 'ndjson', label: 'NDJSON' },
  { value: 'csv', label: 'CSV' },
  { value: 'parquet', label: 'Parquet' },
];

function kilobytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * "Export" on the project settings: one analytics event's rows, or the traces as OTLP/JSON lines,
 * for the window of the page's picker (kept in the URL like every window of the project), downloaded
 * with this tab's key (api/download.ts). docs/data-lifecycle.md "Getting your data out".
 */
export function ExportSection({ projectId }: { projectId: string }) {
  const { query } = useLocation();
  const search = query.toString();
  const window = useMemo(() => readWindow(query), [search]);
  const catalog = useResource(() => getAnalyticsCatalog(projectId), [projectId]);
  const [event, setEvent] = useState('trace.processed');
  const [format, setFormat] = useState('ndjson');
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<{ ok: boolean; text: string } | null>(null);
  const windowQuery = { start: window.start, end_exclusive: window.endExclusive };

  const download = async (path: string, params: Record<string, string>) => {
    setBusy(true);
    setStatus({ ok: true, text: 'Preparing the export…' });
    try {
      const filename = await downloadExport(path, params, (bytes) => setStatus({ ok: true, text: `Downloading… ${kilobytes(bytes)}` }));
      setStatus({ ok: true, text: `Saved ${filename}.` });
    } catch (error) {
      setStatus({ ok: false, text: describeError(error) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="export-title" data-testid="export-section">
      <h2 id="export-title">Export</h2>
      <p class="muted">
        Download what this project stored from {formatDateTime(window.start)} to {formatDateTime(window.endExclusive)} (at most 90 days).
      </p>
      <WindowPicker window={window} showGranularity={false} customActive={query.get('range') === 'custom'} />
      <div class="actions">
        <label class="inline-field">
          Event{' '}
          <select value={event} onChange={(e) => setEvent((e.target as HTMLSelectElement).value)} data-testid="export-event">
            {(catalog.data?.events ?? [{ name: event }]).map((e) => (
              <option key={e.name} value={e.name}>
                {e.name}
              </option>
            ))}
          </select>
        </label>
        <label class="inline-field">
          Format{' '}
          <select value={format} onChange={(e) => setFormat((e.target as HTMLSelectElement).value)} data-testid="export-format">
            {FORMATS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="primary" disabled={busy} data-testid="export-events" onClick={() => void download(`/projects/${projectId}/export`, { from: event, format, ...windowQuery })}>
          Download rows
        </button>
        <button type="button" disabled={busy} data-testid="export-traces" onClick={() => void download(`/projects/${projectId}/export/traces`, windowQuery)}>
          Download traces (OTLP)
        </button>
        <p class={status && !status.ok ? 'field-error' : 'muted'} role="status" aria-live="polite" data-testid="export-status">
          {status?.text ?? ''}
        </p>
      </div>
    </section>
  );
}
