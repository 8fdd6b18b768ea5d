// Sharing a query by URL: the query lives in the fragment (`#q=<encoded query>`), so it never
// reaches the server's logs and a link opens the page with the query in the editor.

const PREFIX = 'q=';

/** The query a fragment carries, or null when it carries none. */
export function queryFromHash(hash: string): string | null {
  const h = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!h.startsWith(PREFIX)) return null;
  try {
    return decodeURIComponent(h.slice(PREFIX.length));
  } catch {
    return null;
  }
}

export function hashForQuery(query: string): string {
  return `#${PREFIX}${encodeURIComponent(query)}`;
}

/** The full address of the page showing `query`. */
export function shareUrl(query: string, location: Location = window.location): string {
  return `${location.origin}${location.pathname}${location.search}${hashForQuery(query)}`;
}
