import { useEffect, useState } from 'preact/hooks';
import { onZoneChange, zoneMode, type ZoneMode } from './time-zone.js';

/**
 * Light or dark: the system's choice (prefers-color-scheme) unless the person picks one in the top
 * bar; the pick is kept in localStorage once made. The stylesheet reads `data-theme` on <html>.
 */
export type ThemeChoice = 'system' | 'light' | 'dark';
export type Theme = 'light' | 'dark';

const STORAGE_KEY = 'lookout.theme';
const listeners = new Set<() => void>();
const media = typeof window !== 'undefined' && window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;

function storedChoice(): ThemeChoice {
  try {
    const value = localStorage.getItem(STORAGE_KEY);
    return value === 'light' || value === 'dark' ? value : 'system';
  } catch {
    return 'system';
  }
}

let choice: ThemeChoice = typeof window === 'undefined' ? 'system' : storedChoice();

export function themeChoice(): ThemeChoice {
  return choice;
}

export function resolvedTheme(): Theme {
  if (choice !== 'system') return choice;
  return media?.matches ? 'dark' : 'light';
}

function apply(): void {
  if (typeof document === 'undefined') return;
  document.documentElement.dataset.theme = resolvedTheme();
  listeners.forEach((listener) => listener());
}

export function setThemeChoice(next: ThemeChoice): void {
  choice = next;
  try {
    if (next === 'system') localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, next);
  } catch {
    // Storage refused: the pick still holds for this page.
  }
  apply();
}

media?.addEventListener('change', apply);
apply();

/** Re-renders the caller when the theme or the time zone changes; returns both. */
export function useAppearance(): { theme: Theme; zone: ZoneMode } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const bump = () => setTick((n) => n + 1);
    listeners.add(bump);
    const offZone = onZoneChange(bump);
    return () => {
      listeners.delete(bump);
      offZone();
    };
  }, []);
  return { theme: resolvedTheme(), zone: zoneMode() };
}
