import { useEffect, useState } from 'preact/hooks';
import type { FreshnessFields } from '../api/types.js';
import { ago } from '../format.js';


/**
 * How fresh the figures on the page are: "updated N s ago" from the answer's data_as_of, ticking
 * while the page stays open, and a warning when processing lags past the server's bound (ingestion
 * then refuses spans until it catches up). Shows nothing for an answer without the fields.
 */
export function Freshness({ data }: { data: FreshnessFields | undefined }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const asOf = data?.data_as_of ? Date.parse(data.data_as_of) : NaN;
  if (Number.isNaN(asOf)) return null;
  const lag = data?.settle_lag_ms ?? 0;
  const bound = data?.settle_max_lag_ms ?? null;
  const behind = bound !== null && lag > bound;
  return (
    <p class={behind ? 'freshness freshness-behind' : 'freshness'} data-testid="freshness" role={behind ? 'alert' : undefined} title={`Complete up to ${new Date(asOf).toLocaleString()}`}>
      Updated {ago(Math.max(0, (now - asOf) / 1000))}
      {behind && <> · Processing is {Math.round(lag / 1000)} s behind; new spans are being refused until it catches up</>}
    </p>
  );
}
