import { useState } from 'preact/hooks';
import { formatDateTime } from '../format.js';
import { setQuery } from '../router.js';
import { granularitiesFor, isoSecond, RANGES, type WindowSelection } from '../time-window.js';
import { fromDateInput, toDateInput, zoneName } from '../time-zone.js';


/**
 * Window presets (24 h, 7 d, 30 d) or a custom start/end, and the granularity of the time series
 * (hour only for windows up to 48 h, and then the default).
 * The choice lives in the URL, so every page of the project keeps it and a link reproduces it.
 */
export function WindowPicker({ window, showGranularity = true, customActive }: { window: WindowSelection; showGranularity?: boolean; customActive: boolean }) {
  const [custom, setCustom] = useState(customActive);
  const [from, setFrom] = useState(toDateInput(window.start));
  const [to, setTo] = useState(toDateInput(window.endExclusive));
  const [invalid, setInvalid] = useState<string | null>(null);

  const applyCustom = (event: Event) => {
    event.preventDefault();
    const start = fromDateInput(from);
    const end = fromDateInput(to);
    if (!start || !end || end <= start) {
      setInvalid('The end must come after the start.');
      return;
    }
    setInvalid(null);
    setQuery({ range: 'custom', from: isoSecond(start), to: isoSecond(end) });
  };

  return (
    <div class="window-picker">
      <div class="segmented" role="group" aria-label="Time window">
        {RANGES.map((range) => {
          const pressed = range.name === 'custom' ? custom : !custom && window.range === range.name;
          return (
            <button
              type="button"
              key={range.name}
              aria-pressed={pressed}
              data-range={range.name}
              onClick={() => {
                if (range.name === 'custom') setCustom(true);
                else {
                  setCustom(false);
                  setQuery({ range: range.name, from: null, to: null });
                }
              }}
            >
              {range.label}
            </button>
          );
        })}
      </div>
      {showGranularity && (
        <label class="inline-field">
          Granularity{' '}
          <select value={window.granularity} onChange={(e) => setQuery({ granularity: (e.target as HTMLSelectElement).value })}>
            {granularitiesFor(window.start, window.endExclusive).map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
        </label>
      )}
      {custom && (
        <form class="custom-window" onSubmit={applyCustom}>
          <label class="inline-field">
            From ({zoneName()}) <input type="datetime-local" value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} required />
          </label>
          <label class="inline-field">
            To ({zoneName()}) <input type="datetime-local" value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} required />
          </label>
          <button type="submit">Apply</button>
          {invalid && (
            <span class="field-error" role="alert">
              {invalid}
            </span>
          )}
        </form>
      )}
      <p class="window-label muted" data-testid="window-label" data-start={window.start} data-end-exclusive={window.endExclusive} data-hours={window.hours ?? ''}>
        {formatDateTime(window.start)} → {formatDateTime(window.endExclusive)}
      </p>
    </div>
  );
}
