// Reading a provenance request without HTTP (src/provenance/request.ts): the three encodings the
// seed allows give the same fields; what cannot be read is the seed's 400 with a reason, another
// content type a 415; criteria and digests are checked as the seed says.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadRequestError, UnsupportedMediaTypeError } from '../../src/errors/domain.js';
import { DETAILS } from '../../src/provenance/errors.js';
import { buildScanOf, criteriaOf, digestOf, readFields, type RequestBody } from '../../src/provenance/request.js';

const SHA = 'b'.repeat(64);

const noParts = async function* (): AsyncGenerator<{ name: string; value: unknown }> {};
const body = (contentType: string, text: string, parts: RequestBody['parts'] = noParts): RequestBody => ({ contentType, text, parts });

async function refusal(p: Promise<unknown>): Promise<BadRequestError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(BadRequestError);
  return e as BadRequestError;
}

describe('readFields', () => {
  it('reads the same fields from JSON, x-www-form-urlencoded and multipart bodies', async () => {
    const value = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !s.includes('\0'));
    await fc.assert(
      fc.asyncProperty(value, fc.array(value, { maxLength: 4 }), fc.array(value, { maxLength: 3 }), async (repo, ids, queries) => {
        const json = await readFields(body('application/json; charset=utf-8', JSON.stringify({ sha256: SHA, repositoryUrl: repo, buildScan: { ids, queries } })));
        const form = new URLSearchParams([['sha256', SHA], ['repositoryUrl', repo], ...ids.map((i) => ['buildScan.ids', i]), ...queries.map((q) => ['buildScan.queries', q])] as [string, string][]);
        const urlencoded = await readFields(body('application/x-www-form-urlencoded', form.toString()));
        const multipart = await readFields(
          body('multipart/form-data; boundary=x', '', async function* () {
            yield { name: 'sha256', value: SHA };
            yield { name: 'repositoryUrl', value: repo };
            for (const i of ids) yield { name: 'buildScan.ids[]', value: i };
            for (const q of queries) yield { name: 'buildScan.query', value: q };
          }),
        );
        const plain = (f: unknown) => Object.fromEntries([...(f as Map<string, string[]>)].filter(([, v]) => v.length > 0));
        expect(plain(urlencoded)).toEqual(plain(json));
        expect(plain(multipart)).toEqual(plain(json));
      }),
      { numRuns: 50 },
    );
  });

  it('answers a body that is not JSON with the bad-criteria detail and the reason', async () => {
    const e = await refusal(readFields(body('application/json', '{"sha256":')));
    expect(e.message).toBe(DETAILS.badCriteria);
    expect(String(e.extensions['reason'])).toMatch(/^the body is not JSON/);
  });

  it('answers a multipart body without boundary or cut short with the reason', async () => {
    expect((await refusal(readFields(body('multipart/form-data', '')))).extensions['reason']).toMatch(/boundary/);
    const cut = readFields(
      body('multipart/form-data; boundary=x', '', async function* () {
        yield { name: 'sha256', value: SHA };
        throw new Error('Unexpected end of form');
      }),
    );
    expect((await refusal(cut)).extensions['reason']).toBe('malformed multipart body: Unexpected end of form');
  });

  it('refuses another content type with 415 naming the accepted ones', async () => {
    const e = await readFields(body('text/plain', 'sha256=x')).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(UnsupportedMediaTypeError);
    expect((e as Error).message).toContain('application/json, application/x-www-form-urlencoded or multipart/form-data');
  });

  it('reads no body as no fields, and a JSON array as no object of fields', async () => {
    expect(await readFields(body('', ''))).toBeUndefined();
    expect(await readFields(body('application/json', '[1]'))).toBeUndefined();
  });
});

describe('criteria, build scans and digests', () => {
  it('takes sha256 (any case) and repositoryUrl given once, and refuses anything else with the seed detail', () => {
    expect(criteriaOf(new Map([['sha256', [SHA.toUpperCase()]], ['repositoryUrl', [' registry.example.com/app ']]]))).toEqual({ sha256: SHA, repositoryUrl: 'registry.example.com/app' });
    for (const fields of [undefined, new Map([['sha256', [SHA]]]), new Map([['sha256', [SHA, SHA]], ['repositoryUrl', ['r.example.com/a']]]), new Map([['sha256', ['abc']], ['repositoryUrl', ['r.example.com/a']]])]) {
      expect(() => criteriaOf(fields)).toThrow(DETAILS.badCriteria);
    }
  });

  it('drops blank build IDs and queries, and refuses values that are not strings', () => {
    expect(buildScanOf(new Map([['buildScan.ids', [' a ', ' ']], ['buildScan.queries', ['', 'tag:x']]]))).toEqual({ buildIds: ['a'], queries: ['tag:x'] });
    expect(() => buildScanOf(new Map([['buildScan.ids', ['\0invalid']]]))).toThrow(BadRequestError);
  });

  it('reads <algorithm>:<hex> digests with the length of their algorithm', () => {
    expect(digestOf(`SHA256:${SHA.toUpperCase()}`)).toEqual({ type: 'sha256', digest: SHA });
    expect(digestOf(`sha512:${'c'.repeat(128)}`).type).toBe('sha512');
    for (const bad of [SHA, `sha256:${'b'.repeat(63)}`, `sha512:${SHA}`, 'sha256:', `md5 :${SHA}`]) expect(() => digestOf(bad), bad).toThrow(BadRequestError);
  });
});
