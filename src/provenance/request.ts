// What a provenance request says, read without HTTP: the body's fields in any of the three
// encodings the seed allows (JSON, x-www-form-urlencoded, multipart), the criteria, the package of
// the path and the digest of a fetch. Whatever cannot be used is the seed's 400 with a `reason`
// (badCriteria); a content type none of the three is 415.

import { UnsupportedMediaTypeError } from '../errors/domain.js';
import { badCriteria } from './errors.js';
import { isRepositoryUrl, SHA256, type PackageAddress } from './package.js';
import { DIGEST_TYPE } from './stores/store.js';

/** A request body as it arrived: its Content-Type, its text, and its parts when it is multipart. */
export interface RequestBody {
  readonly contentType: string;
  /** The body as text (JSON or form encoded); '' when there is none. */
  readonly text: string;
  /** The fields of a multipart body, read as they arrive (the HTTP face's multipart parser). */
  readonly parts: () => AsyncIterable<{ readonly name: string; readonly value: unknown }>;
}

/** Field values of a body in any of the three encodings: name -> every value given. */
export type Fields = ReadonlyMap<string, readonly string[]>;

/** A value that is neither a string, a number nor a boolean: kept so that a check can refuse it. */
const INVALID = '\0invalid';

const FIELD_ALIASES: Record<string, string> = {
  'buildScan.ids[]': 'buildScan.ids',
  'buildScan.queries[]': 'buildScan.queries',
  'buildScan.query': 'buildScan.queries',
};

function addField(fields: Map<string, string[]>, rawName: string, value: unknown): void {
  const name = FIELD_ALIASES[rawName] ?? rawName;
  if (Array.isArray(value)) {
    for (const v of value) addField(fields, name, v);
    return;
  }
  const list = fields.get(name) ?? [];
  if (typeof value === 'string') list.push(value);
  else if (typeof value === 'number' || typeof value === 'boolean') list.push(String(value));
  else list.push(INVALID);
  fields.set(name, list);
}

/** The fields of a JSON object (`buildScan` flattened to `buildScan.ids`...), or undefined for any other JSON. */
function fieldsOfJson(body: unknown): Fields | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const fields = new Map<string, string[]>();
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (k === 'buildScan' && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      for (const [sub, sv] of Object.entries(v as Record<string, unknown>)) addField(fields, `buildScan.${sub}`, sv);
    } else if (v !== null && v !== undefined) addField(fields, k, v);
  }
  return fields;
}

/** The media type of a Content-Type, lower case, without parameters. */
function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/**
 * The body's fields; undefined when a JSON body is not an object. badCriteria for a body that
 * cannot be read as its content type says; UnsupportedMediaTypeError for any other content type.
 */
export async function readFields(body: RequestBody): Promise<Fields | undefined> {
  const type = mediaType(body.contentType);
  if (type === 'multipart/form-data') {
    // The parser's own errors (no closing boundary, a part cut short) carry no status: they are
    // the client's, answered 400 with the parser's words as the reason. Errors with a status (a
    // part over the parser's limits) are answered with it.
    if (!/;\s*boundary=/i.test(body.contentType)) throw badCriteria('malformed multipart body: the Content-Type has no boundary parameter');
    const fields = new Map<string, string[]>();
    try {
      for await (const part of body.parts()) addField(fields, part.name, part.value);
    } catch (e) {
      if (typeof (e as { statusCode?: unknown }).statusCode === 'number') throw e;
      throw badCriteria(`malformed multipart body: ${(e as Error).message}`);
    }
    return fields;
  }
  if (type === 'application/x-www-form-urlencoded') {
    const fields = new Map<string, string[]>();
    for (const [k, v] of new URLSearchParams(body.text)) addField(fields, k, v);
    return fields;
  }
  if (type === '' || type === 'application/json') {
    if (type === '' && body.text === '') return undefined;
    try {
      return fieldsOfJson(JSON.parse(body.text));
    } catch (e) {
      throw badCriteria(`the body is not JSON: ${(e as Error).message}`);
    }
  }
  throw new UnsupportedMediaTypeError(`Unsupported content type ${body.contentType}: send application/json, application/x-www-form-urlencoded or multipart/form-data`);
}

export function single(fields: Fields, name: string): string | undefined {
  const v = fields.get(name);
  return v && v.length === 1 ? v[0] : undefined;
}

export interface Criteria {
  readonly sha256: string;
  readonly repositoryUrl: string;
}

/** sha256 and repositoryUrl of a body; badCriteria when either is missing or malformed. */
export function criteriaOf(fields: Fields | undefined): Criteria {
  const sha = fields && single(fields, 'sha256')?.trim().toLowerCase();
  const repo = fields && single(fields, 'repositoryUrl')?.trim();
  if (sha === undefined || !SHA256.test(sha) || repo === undefined || !isRepositoryUrl(repo)) {
    throw badCriteria('sha256 must be 64 hex characters and repositoryUrl a URL or host/path');
  }
  return { sha256: sha, repositoryUrl: repo };
}

/** The build IDs and queries of a publish body (blank ones dropped). */
export function buildScanOf(fields: Fields): { readonly buildIds: readonly string[]; readonly queries: readonly string[] } {
  const ids = fields.get('buildScan.ids') ?? [];
  const queries = fields.get('buildScan.queries') ?? [];
  if ([...ids, ...queries].some((v) => v.includes('\0'))) throw badCriteria('buildScan.ids and buildScan.queries must be strings');
  return { buildIds: ids.map((s) => s.trim()).filter((s) => s !== ''), queries: queries.filter((q) => q.trim() !== '') };
}

/** Path parameters of a provenance route. */
export type PathParams = Readonly<Record<string, string>>;

export function packageOf(p: PathParams): PackageAddress {
  return { type: p['type']!, ...(p['namespace'] !== undefined ? { namespace: p['namespace'] } : {}), name: p['name']!, version: p['version']! };
}

/** `<algorithm>:<hex>` of a fetch path; badCriteria when malformed. */
export function digestOf(param: string): { readonly type: string; readonly digest: string } {
  const colon = param.indexOf(':');
  const type = colon < 0 ? '' : param.slice(0, colon).toLowerCase();
  const digest = colon < 0 ? '' : param.slice(colon + 1).toLowerCase();
  const ok = DIGEST_TYPE.test(type) && (type === 'sha256' ? SHA256.test(digest) : type === 'sha512' ? /^[0-9a-f]{128}$/.test(digest) : /^[0-9a-f]{16,256}$/.test(digest));
  if (!ok) throw badCriteria(`malformed digest ${JSON.stringify(param)}: expected <algorithm>:<hex>, e.g. sha256:<64 hex characters>`);
  return { type, digest };
}
