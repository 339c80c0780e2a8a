/**
 * The API key lives only in this tab's sessionStorage: never in localStorage, a cookie or the URL, so it is gone when the tab closes.
 */
const KEY = 'lookout.apiKey';

export function getApiKey(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function setApiKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function clearApiKey(): void {
  sessionStorage.removeItem(KEY);
}
