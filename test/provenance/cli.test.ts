// `buildscope attestation verify` says precisely why an envelope fails; `provenance rotate-key`
// makes a new active key while old signatures keep verifying.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IN_TOTO_PAYLOAD_TYPE, signEnvelope } from '../../src/provenance/dsse.js';
import { generateSigningKey, loadKeyRing } from '../../src/provenance/keys.js';
import { STATEMENT_V1 } from '../../src/provenance/statement.js';
import { CLI } from '../support/compiled-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'bs-prov-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [...CLI, ...args], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const key = generateSigningKey('ecdsa-p256');
const other = generateSigningKey('ed25519');
const pem = join(dir, 'key.pub.pem');
writeFileSync(pem, key.publicKeyPem);
const SHA = 'f'.repeat(64);
const statement = { _type: STATEMENT_V1, subject: [{ name: 'pkg:oci/app', digest: { sha256: SHA } }], predicateType: 'https://slsa.dev/provenance/v1', predicate: {} };

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('buildscope attestation verify', { timeout: 120_000 }, () => {
  const good = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(statement)), key);

  it('accepts a valid envelope and names key, predicate and subject', () => {
    const r = cli('attestation', 'verify', file('good.json', good), '--key', pem, '--sha256', SHA);
    expect(r.status).toBe(0);
    expect(r.out).toBe(`OK: signed by ${key.keyid}; predicate https://slsa.dev/provenance/v1; subject pkg:oci/app\n`);
  });

  it('says why each bad envelope fails, exit status 1', () => {
    const tampered = { ...good, payload: Buffer.from(JSON.stringify({ ...statement, predicate: { evil: true } })).toString('base64') };
    const cases: [string, unknown, string][] = [
      ['tampered.json', tampered, 'FAILED (bad signature): the signature #1 by key'],
      ['stranger.json', signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(statement)), other), `FAILED (unknown key): signature #1 is by an unknown key (keyid ${other.keyid})`],
      ['type.json', signEnvelope('application/json', Buffer.from(JSON.stringify(statement)), key), 'FAILED (wrong payload type): payload type "application/json" is not supported'],
      ['statement.json', signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify({ ...statement, subject: [] })), key), 'FAILED (malformed statement): the statement has no subject'],
      ['notjson.json', 'hello', 'FAILED (malformed envelope): '],
      ['nosig.json', { payload: good.payload, payloadType: IN_TOTO_PAYLOAD_TYPE, signatures: [] }, 'FAILED (malformed envelope): the envelope has no `signatures`'],
    ];
    // One run for all files: each gets its own line, the exit status is 1 when any fails.
    const paths = cases.map(([name, content]) => file(name, content));
    const r = cli('attestation', 'verify', ...paths, join(dir, 'good.json'), '--key', pem);
    expect(r.status).toBe(1);
    const lines = r.out.trimEnd().split('\n');
    expect(lines).toHaveLength(cases.length + 1);
    cases.forEach(([, , expected], i) => expect(lines[i]!.startsWith(`${paths[i]}: ${expected}`), lines[i]).toBe(true));
    expect(lines[cases.length]!.startsWith(`${join(dir, 'good.json')}: OK: signed by ${key.keyid}`)).toBe(true);
    const mismatch = cli('attestation', 'verify', join(dir, 'good.json'), '--key', pem, '--sha256', 'a'.repeat(64), '--json');
    expect(mismatch.status).toBe(1);
    expect(JSON.parse(mismatch.out)).toMatchObject({ ok: false, code: 'subject-mismatch' });
  });
});

describe('key rotation', { timeout: 120_000 }, () => {
  it('rotate-key adds an active key; the keys generated on first start keep verifying', () => {
    const data = join(dir, 'data');
    const first = loadKeyRing({ algorithm: 'ed25519', directory: join(data, 'provenance', 'keys'), files: [], trusted: [] });
    const old = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(statement)), first.active);
    const r = cli('provenance', 'rotate-key', '--data', data);
    expect(r.status).toBe(0);
    const newId = r.out.trim();
    expect(newId).toMatch(/^[0-9a-f]{64}$/);
    expect(newId).not.toBe(first.active.keyid);
    const ring = loadKeyRing({ algorithm: 'ed25519', directory: join(data, 'provenance', 'keys'), files: [], trusted: [] });
    expect(ring.active.keyid).toBe(newId);
    expect(ring.verification.map((k) => k.keyid).sort()).toEqual([first.active.keyid, newId].sort());
    expect(readdirSync(join(data, 'provenance', 'keys')).filter((f) => f.endsWith('.key.pem'))).toHaveLength(2);
    // `attestation verify` without --key trusts the data directory's keys, old and new.
    const v = cli('attestation', 'verify', file('old.json', old), '--data', data);
    expect(v.status).toBe(0);
    expect(readFileSync(join(data, 'provenance', 'keys', 'active'), 'utf8').trim()).toBe(newId);
  });
});
