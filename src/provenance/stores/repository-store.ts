// `repo:<name>`: an artifact repository reached over HTTP. Envelopes are files under a base URL:
// PUT to write, GET to read, and GET of the folder (with a trailing slash) to list it. Listings are
// read as a JSON array of `{name}` (nginx `autoindex_format json`, many repository managers) or as
// an HTML index whose links name the files.

import { ExternalServiceError } from '../errors.js';
import { fileName, idsFromNames, locationSegments, type AttestationLocation, type AttestationStore } from './store.js';

export interface RepositoryStoreOptions {
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
  readonly token?: string;
  /** How long a folder listing is reused (ms). Our own writes refresh it at once. */
  readonly listCacheMs: number;
  readonly timeoutMs: number;
}

export class RepositoryStore implements AttestationStore {
  readonly type = 'repo' as const;
  readonly instance: string;
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly listings = new Map<string, { at: number; ids: readonly string[] }>();

  constructor(
    name: string,
    private readonly options: RepositoryStoreOptions,
  ) {
    this.instance = `repo:${name}`;
    this.base = options.url.replace(/\/+$/, '');
    this.headers = {};
    if (options.token) this.headers['authorization'] = `Bearer ${options.token}`;
    else if (options.username !== undefined) {
      this.headers['authorization'] = `Basic ${Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64')}`;
    }
  }

  private folderUrl(l: AttestationLocation): string {
    return `${this.base}/${locationSegments(l).map(encodeURIComponent).join('/')}/`;
  }

  describe(l: AttestationLocation, id: string): string {
    return this.folderUrl(l) + encodeURIComponent(fileName(id));
  }

  private async request(method: string, url: string, body?: Uint8Array): Promise<Response> {
    try {
      return await fetch(url, {
        method,
        headers: { ...this.headers, ...(body ? { 'content-type': 'application/json' } : { accept: 'application/json, text/html' }) },
        ...(body ? { body: Buffer.from(body) as unknown as BodyInit } : {}),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (e as Error).message;
      throw new ExternalServiceError(`artifact repository ${this.instance} (${method} ${url}): ${why}`, { cause: e });
    }
  }

  async put(l: AttestationLocation, id: string, bytes: Uint8Array): Promise<void> {
    const url = this.describe(l, id);
    const res = await this.request('PUT', url, bytes);
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new ExternalServiceError(`artifact repository ${this.instance} (PUT ${url}): HTTP ${res.status}`);
    this.listings.delete(this.folderUrl(l));
  }

  async get(l: AttestationLocation, id: string): Promise<Buffer | undefined> {
    const url = this.describe(l, id);
    const res = await this.request('GET', url);
    if (res.status === 404) {
      await res.arrayBuffer().catch(() => undefined);
      return undefined;
    }
    if (!res.ok) throw new ExternalServiceError(`artifact repository ${this.instance} (GET ${url}): HTTP ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  }

  async list(l: AttestationLocation): Promise<readonly string[]> {
    const url = this.folderUrl(l);
    const cached = this.listings.get(url);
    if (cached && Date.now() - cached.at < this.options.listCacheMs) return cached.ids;
    const res = await this.request('GET', url);
    const text = await res.text();
    if (res.status === 404) return [];
    if (!res.ok) throw new ExternalServiceError(`artifact repository ${this.instance} (GET ${url}): HTTP ${res.status}`);
    const fresh = idsFromNames(parseListing(text));
    // Hand back the same array while the folder is unchanged: callers memoise on its identity.
    const ids = cached && cached.ids.length === fresh.length && cached.ids.every((id, i) => id === fresh[i]) ? cached.ids : fresh;
    this.listings.set(url, { at: Date.now(), ids });
    return ids;
  }
}

/** File names of a folder listing: a JSON array of names or of `{name}`, or an HTML index. */
export function parseListing(text: string): string[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    try {
      const v = JSON.parse(trimmed) as unknown;
      const items = Array.isArray(v) ? v : ((v as { children?: unknown; files?: unknown }).children ?? (v as { files?: unknown }).files);
      if (Array.isArray(items)) {
        return items
          .map((x) => (typeof x === 'string' ? x : typeof x === 'object' && x !== null ? ((x as { name?: unknown; uri?: unknown }).name ?? (x as { uri?: unknown }).uri) : undefined))
          .filter((x): x is string => typeof x === 'string')
          .map((x) => x.replace(/^\//, ''));
      }
    } catch {
      // fall through to HTML
    }
  }
  const names: string[] = [];
  for (const m of text.matchAll(/href="([^"?#]+)"/gi)) {
    const href = m[1]!;
    const last = href.split('/').filter((s) => s !== '').pop();
    if (last) {
      try {
        names.push(decodeURIComponent(last));
      } catch {
        // not a name we wrote
      }
    }
  }
  return names;
}
