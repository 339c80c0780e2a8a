import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useLiveRefresh } from './live-refresh.js';

export type Resource<T> =
  | { state: 'loading'; data?: T; error?: undefined; reload: () => void }
  | { state: 'ok'; data: T; error?: undefined; reload: () => void }
  | { state: 'error'; data?: T; error: unknown; reload: () => void };

/**
 * Loads one API answer for the current inputs. A newer load supersedes an older one still in
 * flight (so a fast click through window presets never shows a stale answer), and the previous
 * data stays visible while the next loads. An auto-refresh (live-refresh.ts) loads again, keeping
 * the answer on screen even when the refresh moved the inputs (a preset window's end).
 */
export function useResource<T>(load: () => Promise<T>, inputs: unknown[]): Resource<T> {
  const [state, setState] = useState<{ state: 'loading' | 'ok' | 'error'; data?: T; error?: unknown }>({ state: 'loading' });
  const generation = useRef(0);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  const inputKey = JSON.stringify(inputs);
  const lastKey = useRef(inputKey);
  const { generation: refreshed } = useLiveRefresh();
  const lastRefresh = useRef(refreshed);

  useEffect(() => {
    const mine = ++generation.current;
    // A reload keeps the old answer on screen; new inputs (another trace, another window) do not.
    const keep = lastKey.current === inputKey || lastRefresh.current !== refreshed;
    lastKey.current = inputKey;
    lastRefresh.current = refreshed;
    setState((previous) => ({ state: 'loading', data: keep ? previous.data : undefined }));
    load().then(
      (data) => {
        if (mine === generation.current) setState({ state: 'ok', data });
      },
      (error: unknown) => {
        if (mine === generation.current) setState((previous) => ({ state: 'error', error, data: previous.data }));
      },
    );
  }, [inputKey, tick, refreshed]);

  return { ...state, reload } as Resource<T>;
}
