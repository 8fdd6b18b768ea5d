// The access key the person signed in with. Kept in sessionStorage only (gone when the tab
// closes, never written to localStorage or a cookie) and sent as `Authorization: Bearer <key>`.

const STORAGE_KEY = 'buildscope.playground.accessKey';

export function accessKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    // Storage can be disabled by the browser's privacy settings: the page still works signed out.
    return null;
  }
}

export function storeAccessKey(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
}

export function forgetAccessKey(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing stored, nothing to forget.
  }
}
