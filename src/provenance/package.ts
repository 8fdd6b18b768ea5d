// The package an attestation is about: its address in the API path, its package URL (the subject
// name) and the repository it lives in.

import { PackageURL } from 'packageurl-js';

export interface PackageAddress {
  /** Package type as written in the API path: `oci`, `jvmpkg` (a JVM archive), or another purl type. */
  readonly type: string;
  readonly namespace?: string;
  readonly name: string;
  readonly version: string;
}

const TYPE = /^[a-z][a-z0-9.+-]*$/;
const SEGMENT = /^[^/\\\0]+$/;

/** Validates the path variables of a package; returns a reason when one is unusable. */
export function checkPackageAddress(p: PackageAddress): string | undefined {
  if (!TYPE.test(p.type)) return `package type ${JSON.stringify(p.type)} is not a package URL type`;
  // `_` is the store layout's folder for "no namespace".
  if (p.namespace === '_') return 'package namespace "_" is reserved: omit the namespace segment instead';
  for (const [k, v] of [['namespace', p.namespace], ['name', p.name], ['version', p.version]] as const) {
    if (v === undefined) continue;
    if (!SEGMENT.test(v) || v === '.' || v === '..') return `package ${k} ${JSON.stringify(v)} is not a valid path segment`;
  }
  return undefined;
}

/** The purl type of an API package type: `jvmpkg` is the path spelling of Maven-style JVM archives. */
export function purlType(type: string): string {
  return type === 'jvmpkg' ? 'maven' : type;
}

/**
 * The package URL used as the subject name. For OCI images the purl version is the image digest and
 * the tag a qualifier (`pkg:oci/app@sha256:…?repository_url=…&tag=1.2`); other types keep their version.
 */
export function packageUrl(p: PackageAddress, sha256: string, repositoryUrl: string): string {
  const type = purlType(p.type);
  if (type === 'oci') {
    return new PackageURL('oci', undefined, p.name, `sha256:${sha256}`, { repository_url: repositoryUrl, tag: p.version }).toString();
  }
  return new PackageURL(type, p.namespace, p.name, p.version, { repository_url: repositoryUrl }).toString();
}

/**
 * Why no package URL can be formed for this address, or undefined when one can: the purl
 * specification gives some types required parts (a `maven` package needs its namespace, the
 * groupId; so does `swift`), which the API's no-namespace paths cannot supply.
 */
export function packageUrlProblem(p: PackageAddress): string | undefined {
  try {
    packageUrl(p, '0'.repeat(64), 'registry.example.com/check');
    return undefined;
  } catch (e) {
    const type = purlType(p.type);
    const why = (e as Error).message.replace(/^Invalid purl:\s*/i, '');
    const hint = p.namespace === undefined ? `: publish it under /packages/${p.type}/{namespace}/${p.name}/${p.version}` : '';
    return `no package URL of type ${JSON.stringify(type)} can be formed for this package (${why})${hint}`;
  }
}

/** The `repository_url` qualifier of a package URL, if it has one. */
export function repositoryOfPackageUrl(purl: string): string | undefined {
  try {
    return PackageURL.fromString(purl).qualifiers?.['repository_url'];
  } catch {
    return undefined;
  }
}

export const SHA256 = /^[0-9a-f]{64}$/;

/** `repositoryUrl` is a URL (http, https, oci…) or a host/path form such as `registry.example.com/team/app`. */
export function isRepositoryUrl(s: string): boolean {
  if (s.length === 0 || s.length > 2048 || /\s/.test(s)) return false;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) {
    try {
      const u = new URL(s);
      return u.host !== '';
    } catch {
      return false;
    }
  }
  // host[:port][/path]: a host name with at least one dot or `localhost`.
  return /^(localhost|[a-z0-9-]+(\.[a-z0-9-]+)+)(:\d{1,5})?(\/[^\s?#]*)?$/i.test(s);
}

/** Normalises a repository URL for prefix comparisons: no scheme, no trailing slash, lower-case host. */
export function normaliseRepository(s: string): string {
  const noScheme = s.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = noScheme.indexOf('/');
  const host = (slash < 0 ? noScheme : noScheme.slice(0, slash)).toLowerCase();
  const path = slash < 0 ? '' : noScheme.slice(slash);
  return (host + path).replace(/\/+$/, '');
}

/** Whether `repository` is `prefix` or below it (path-segment aware). */
export function repositoryUnder(repository: string, prefix: string): boolean {
  const r = normaliseRepository(repository);
  const p = normaliseRepository(prefix);
  return r === p || r.startsWith(`${p}/`);
}
