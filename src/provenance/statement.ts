// in-toto Statement v1: what an attestation says (predicate) about which artifacts (subject).

export const STATEMENT_V1 = 'https://in-toto.io/Statement/v1';
/** Older scanners still write v0.1 statements; their layout is the same for what we read. */
export const STATEMENT_V01 = 'https://in-toto.io/Statement/v0.1';

export interface ResourceDescriptor {
  readonly name?: string;
  readonly uri?: string;
  readonly digest?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
}

export interface Statement {
  readonly _type: string;
  readonly subject: readonly ResourceDescriptor[];
  readonly predicateType: string;
  readonly predicate: Readonly<Record<string, unknown>>;
}

export type StatementParse =
  | { readonly ok: true; readonly statement: Statement }
  | { readonly ok: false; readonly reason: 'malformed-statement'; readonly message: string };

export function parseStatement(body: Uint8Array): StatementParse {
  const bad = (message: string): StatementParse => ({ ok: false, reason: 'malformed-statement', message });
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch (e) {
    return bad(`the payload is not JSON (${(e as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('the payload is not a JSON object');
  const v = value as Record<string, unknown>;
  if (v._type !== STATEMENT_V1 && v._type !== STATEMENT_V01) return bad(`_type is ${JSON.stringify(v._type)}, expected ${STATEMENT_V1}`);
  if (!Array.isArray(v.subject) || v.subject.length === 0) return bad('the statement has no subject');
  for (const [i, s] of v.subject.entries()) {
    if (typeof s !== 'object' || s === null || Array.isArray(s)) return bad(`subject #${i + 1} is not an object`);
    const d = (s as Record<string, unknown>).digest;
    if (typeof d !== 'object' || d === null || Object.values(d).some((x) => typeof x !== 'string') || Object.keys(d).length === 0) {
      return bad(`subject #${i + 1} has no digest`);
    }
  }
  if (typeof v.predicateType !== 'string' || v.predicateType === '') return bad('the statement has no predicateType');
  const predicate = v.predicate ?? {};
  if (typeof predicate !== 'object' || predicate === null || Array.isArray(predicate)) return bad('the predicate is not an object');
  return {
    ok: true,
    statement: {
      _type: v._type,
      subject: v.subject as ResourceDescriptor[],
      predicateType: v.predicateType,
      predicate: predicate as Record<string, unknown>,
    },
  };
}

/** Whether any subject carries this SHA-256 digest (hex compared case-insensitively). */
export function subjectHasSha256(statement: Statement, sha256: string): boolean {
  const want = sha256.toLowerCase();
  return statement.subject.some((s) => s.digest?.['sha256']?.toLowerCase() === want);
}
