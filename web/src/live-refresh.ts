import { useEffect, useState } from 'preact/hooks';

/**
 * Auto-refresh: while it is on, every REFRESH_SECONDS the open page asks the API again (a preset
 * window moves forward to the current minute) and keeps the figures it has on screen until the new
 * answers arrive. Off by default; the switch is kept in localStorage once used.
 */
export const REFRESH_SECONDS = 30;
const STORAGE_KEY = 'lookout.autoRefresh';

let generation = 0;
let enabled = false;
let timer: ReturnType<typeof setInterval> | null = null;
const listeners = new Set<() => void>();

try {
  enabled = typeof localStorage !== 'undefined' && localStorage.getItem(STORAGE_KEY) === 'on';
} catch {
  enabled = false;
}

function notify(): void {
  listeners.forEach((listener) => listener());
}

function schedule(): void {
  if (timer) clearInterval(timer);
  timer = null;
  if (!enabled || typeof window === 'undefined') return;
  timer = setInterval(() => {
    // A hidden tab does not poll; it refreshes when it is looked at again.
    if (document.visibilityState === 'hidden') return;
    refreshNow();
  }, REFRESH_SECONDS * 1000);
}

/** Counts refreshes: a load for a newer generation keeps the previous answer on screen meanwhile. */
export function refreshGeneration(): number {
  return generation;
}

export function refreshNow(): void {
  generation += 1;
  notify();
}

export function autoRefreshEnabled(): boolean {
  return enabled;
}

export function setAutoRefresh(on: boolean): void {
  enabled = on;
  try {
    localStorage.setItem(STORAGE_KEY, on ? 'on' : 'off');
  } catch {
    // Storage refused: the switch still holds for this page.
  }
  schedule();
  notify();
}

if (typeof document !== 'undefined') {
  schedule();
  document.addEventListener('visibilitychange', () => {
    if (enabled && document.visibilityState === 'visible') refreshNow();
  });
}

/** The current refresh generation and switch; re-renders the caller when either changes. */
export function useLiveRefresh(): { generation: number; enabled: boolean } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const bump = () => setTick((n) => n + 1);
    listeners.add(bump);
    return () => {
      listeners.delete(bump);
    };
  }, []);
  return { generation, enabled };
}
