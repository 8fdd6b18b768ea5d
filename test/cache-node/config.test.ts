import { scryptSync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { DEFAULTS, loadConfigFile, parseConfigText } from '../../src/cache-node/config.js';
import { cacheNodeConfigSchema, HASHED_SECRET_PATTERN } from '../../src/cache-node/schema.js';
import { DEFAULT_PARAMETERS, hashSecret, parseHashedSecret, verifySecret } from '../../src/cache-node/secret.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const FAST = { logN: 4, r: 1, p: 1 } as const;

describe('the committed JSON Schema', () => {
  it('is the schema the node validates with', () => {
    const committed = JSON.parse(readFileSync(join(import.meta.dirname, '../../schema/cache-node-config-v4.schema.json'), 'utf8')) as unknown;
    expect(committed).toEqual(JSON.parse(JSON.stringify(cacheNodeConfigSchema)));
  });

  it('is a valid draft 2020-12 schema', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    expect(ajv.validateSchema(cacheNodeConfigSchema)).toBe(true);
  });
});

describe('valid configuration files', () => {
  for (const name of readdirSync(join(fixtures, 'valid')).sort()) {
    it(`accepts ${name}`, async () => {
      const r = await loadConfigFile(join(fixtures, 'valid', name));
      expect(r.ok ? [] : r.faults).toEqual([]);
    });
  }

  it('applies documented, safe defaults to the smallest file', () => {
    const r = parseConfigText('{"version": 4}');
    if (!r.ok) throw new Error('expected valid');
    expect(r.config).toMatchObject({
      anonymousLevel: 'none',
      freeSpaceBufferMiB: DEFAULTS.freeSpaceBufferSize,
      maxArtifactMiB: DEFAULTS.maxArtifactSize,
      maxEntryAgeHours: null,
      targetSize: { type: 'maxAvailable' },
      registration: null,
      uiAccess: { type: 'generated' },
    });
    expect(r.config.users.size).toBe(0);
  });

  it('reads JSON and YAML forms of the same settings alike', async () => {
    const json = await loadConfigFile(join(fixtures, 'valid', 'full.json'));
    const yaml = await loadConfigFile(join(fixtures, 'valid', 'full.yaml'));
    expect(json.ok && yaml.ok).toBe(true);
    if (json.ok && yaml.ok) {
      expect([...json.config.users.keys()]).toEqual(['alice', 'bob', 'carol']);
      expect(json.config.targetSize).toEqual({ type: 'fixed', sizeMiB: 20000 });
      expect(yaml.config.users.get('alice')?.note).toBe('CI agents');
      expect(yaml.config.uiAccess.type).toBe('generated');
    }
  });
});

describe('invalid configuration files', () => {
  const files = readdirSync(join(fixtures, 'invalid')).filter((f) => !f.endsWith('.faults')).sort();
  it('has an expectation for every file', () => {
    expect(files.length).toBeGreaterThanOrEqual(45);
    for (const f of files) expect(readdirSync(join(fixtures, 'invalid'))).toContain(f.replace(/\.(json|yaml)$/, '.faults'));
  });
  for (const name of files) {
    it(`rejects ${name} with every fault located and explained`, async () => {
      const r = await loadConfigFile(join(fixtures, 'invalid', name));
      expect(r.ok).toBe(false);
      if (r.ok) return;
      const expected = readFileSync(join(fixtures, 'invalid', name.replace(/\.(json|yaml)$/, '.faults')), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => l.split('\t') as [string, string]);
      for (const [path, text] of expected) {
        const match = r.faults.find((f) => f.path === path && f.message.includes(text));
        expect(match, `expected "${path}: …${text}…" among\n${r.faults.map((f) => `${f.path}: ${f.message}`).join('\n')}`).toBeDefined();
      }
      // Every fault says where it is in the file.
      for (const f of r.faults) expect(f.line).toBeGreaterThanOrEqual(1);
    });
  }

  it('gives the example message of the requirement word for word', () => {
    const r = parseConfigText('{"version":4,"cache":{"targetSize":{"type":"fixed","size":0}}}');
    expect(r.ok ? [] : r.faults.map((f) => `${f.path}: ${f.message}`)).toEqual(['cache.targetSize.size: must be >= 1 (MiB), found 0']);
  });

  it('lists every fault of a file at once, with line numbers', async () => {
    const r = await loadConfigFile(join(fixtures, 'invalid', 'several.yaml'));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.faults.map((f) => [f.path, f.line])).toEqual([
      ['cache.maxArtifactSize', 3],
      ['cache.targetSize.size', 6],
      ['uiAccess.type', 8],
    ]);
  });
});

describe('hashed secret strings', () => {
  const pattern = new RegExp(HASHED_SECRET_PATTERN);

  it('hash-secret output has the shape of the seed and verifies (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ minLength: 1, maxLength: 40 }), async (secret, other) => {
        const h = await hashSecret(secret, FAST);
        expect(h).toMatch(pattern);
        expect(h).toMatch(/^[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{27}=$/);
        const parsed = parseHashedSecret(h);
        if (!parsed.ok) throw new Error(parsed.reason);
        expect(await verifySecret(secret, parsed.value)).toBe(true);
        if (other.normalize('NFC') !== secret.normalize('NFC')) expect(await verifySecret(other, parsed.value)).toBe(false);
      }),
      { numRuns: 60 },
    );
  });

  it('tolerates whitespace between any characters (property)', async () => {
    const h = await hashSecret('alice-secret', FAST);
    await fc.assert(
      fc.property(fc.array(fc.constantFrom(' ', '\n', '\t', '  '), { minLength: h.length, maxLength: h.length }), (spaces) => {
        const spaced = [...h].map((c, i) => (i % 3 === 0 ? c + spaces[i] : c)).join('');
        expect(spaced).toMatch(pattern);
        const parsed = parseHashedSecret(spaced);
        expect(parsed.ok).toBe(true);
      }),
    );
  });

  it('uses a salt: the same secret hashes differently each time', async () => {
    expect(await hashSecret('same', FAST)).not.toBe(await hashSecret('same', FAST));
  });

  it('accepts padding forms and rejects malformed tails', () => {
    const head = `${'A'.repeat(43)}=`;
    for (const tail of ['', 'QUJD', 'QUI=', 'QQ==', 'QUJDQUJD', 'QUJD QQ= =']) expect(`${head}:${tail}`).toMatch(pattern);
    for (const tail of ['Q', 'QU', 'QUJ', 'Q===', 'QUJD=', '====', 'QU!D']) expect(`${head}:${tail}`).not.toMatch(pattern);
    expect(`${'A'.repeat(42)}=:QUJD`).not.toMatch(pattern);
    expect(`${'A'.repeat(44)}:QUJD`).not.toMatch(pattern);
    expect(`${'A'.repeat(43)}=QUJD`).not.toMatch(pattern);
  });

  it('verifies secrets hashed with the default (slow) parameters', async () => {
    const h = await hashSecret('pässwörd');
    const parsed = parseHashedSecret(h);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.value.parameters).toEqual({ logN: 15, r: 8, p: 1 });
    expect(await verifySecret('pässwörd', parsed.value)).toBe(true);
    expect(await verifySecret('passwort', parsed.value)).toBe(false);
  });
});

describe('hashed secrets of the seed\'s shape written by another tool', () => {
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('');
  const b64 = (n: number) => fc.array(fc.constantFrom(...B64), { minLength: n, maxLength: n }).map((a) => a.join(''));
  /** Any string of the seed's shape: 43 characters, `=`, `:`, groups of four, optional padding. */
  const seedShaped = fc
    .tuple(
      b64(42),
      fc.constantFrom('A', 'E', 'I', 'M', 'Q', 'U', 'Y', 'c', 'g', 'k', 'o', 's', 'w', '0', '4', '8'),
      fc.array(b64(4), { maxLength: 12 }),
      fc.oneof(fc.constant(''), b64(2).map((x) => `${x}==`), b64(3).map((x) => `${x}=`)),
    )
    .map(([a, last, groups, pad]) => `${a}${last}=:${groups.join('')}${pad}`);

  it('every string of the seed\'s shape is accepted by the configuration check (property)', () => {
    const pattern = new RegExp(HASHED_SECRET_PATTERN);
    fc.assert(
      fc.property(seedShaped, (hash) => {
        expect(hash).toMatch(pattern);
        expect(parseHashedSecret(hash).ok).toBe(true);
        const r = parseConfigText(JSON.stringify({ version: 4, cache: { accessControl: { users: { u: { level: 'read', password: hash } } } }, uiAccess: { type: 'secure', username: 'admin', password: hash } }));
        expect(r.ok ? [] : r.faults).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('reads a second part that is not hash-secret\'s as the salt, with the default scrypt parameters', async () => {
    // Made without hashSecret: plain scrypt (N = 2^15, r = 8, p = 1, 32 bytes) over a 17-byte salt.
    const salt = Buffer.from('another-tool-salt');
    const key = scryptSync('s3cret', salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const text = `${key.toString('base64')}:${salt.toString('base64')}`;
    expect(text).toBe('m1HYT8QOoyet/XrBBfabKfOY1ML+NFBk+1XsQMgGetQ=:YW5vdGhlci10b29sLXNhbHQ=');
    // Wrapped over lines as a long value may be.
    const parsed = parseHashedSecret(`${text.slice(0, 30)}\n  ${text.slice(30, 50)} ${text.slice(50)}`);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.value.kind).toBe('salt');
    expect(parsed.value.parameters).toEqual(DEFAULT_PARAMETERS);
    expect(parsed.value.salt.equals(salt)).toBe(true);
    expect(await verifySecret('s3cret', parsed.value)).toBe(true);
    expect(await verifySecret('s3cret ', parsed.value)).toBe(false);
  });

  it('reads an empty second part as an empty salt, and hash-secret\'s own output as parameters', async () => {
    const key = scryptSync('', Buffer.alloc(0), 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const empty = parseHashedSecret(`${key.toString('base64')}:`);
    if (!empty.ok) throw new Error(empty.reason);
    expect(empty.value.kind).toBe('salt');
    expect(empty.value.salt.length).toBe(0);
    expect(await verifySecret('', empty.value)).toBe(true);
    const own = parseHashedSecret(await hashSecret('x', FAST));
    expect(own.ok && own.value.kind).toBe('parameters');
    expect(own.ok && own.value.parameters).toEqual(FAST);
  });

  it('a 20-byte second part with the version byte but unusable parameters is a salt, not a fault', async () => {
    const meta = Buffer.concat([Buffer.from([1, 0, 8, 1]), Buffer.alloc(16, 9)]);
    const key = scryptSync('pw', meta, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const parsed = parseHashedSecret(`${key.toString('base64')}:${meta.toString('base64')}`);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.value.kind).toBe('salt');
    expect(await verifySecret('pw', parsed.value)).toBe(true);
  });
});

describe('numeric limits of the seed (properties)', () => {
  const limits: { path: string; file: (n: number) => unknown; min: number; unit: string }[] = [
    { path: 'cache.freeSpaceBufferSize', file: (n) => ({ version: 4, cache: { freeSpaceBufferSize: n } }), min: 0, unit: 'MiB' },
    { path: 'cache.maxArtifactSize', file: (n) => ({ version: 4, cache: { maxArtifactSize: n } }), min: 1, unit: 'MiB' },
    { path: 'cache.maxEntryAgeInHours', file: (n) => ({ version: 4, cache: { maxEntryAgeInHours: n } }), min: 1, unit: 'hours' },
    { path: 'cache.targetSize.size', file: (n) => ({ version: 4, cache: { targetSize: { type: 'fixed', size: n } } }), min: 1, unit: 'MiB' },
  ];
  for (const l of limits) {
    it(`${l.path}: an integer is valid iff >= ${l.min}, and a fault names the limit and the value`, () => {
      fc.assert(
        fc.property(fc.integer({ min: -1_000_000, max: 1_000_000 }), (n) => {
          const r = parseConfigText(JSON.stringify(l.file(n)));
          if (n >= l.min) expect(r.ok).toBe(true);
          else expect(r.ok ? [] : r.faults.map((f) => `${f.path}: ${f.message}`)).toEqual([`${l.path}: must be >= ${l.min} (${l.unit}), found ${n}`]);
        }),
      );
    });
  }

  it('any combination of valid settings is valid (property)', () => {
    const arb = fc.record(
      {
        cache: fc.record(
          {
            accessControl: fc.record({ anonymousLevel: fc.constantFrom('none', 'read', 'readwrite') }, { requiredKeys: [] }),
            freeSpaceBufferSize: fc.nat(),
            maxArtifactSize: fc.integer({ min: 1 }),
            maxEntryAgeInHours: fc.option(fc.integer({ min: 1 }), { nil: null }),
            targetSize: fc.oneof(fc.record({ type: fc.constant('fixed'), size: fc.integer({ min: 1 }) }), fc.constant({ type: 'maxAvailable' })),
          },
          { requiredKeys: [] },
        ),
        registration: fc.option(
          fc.record({ key: fc.string(), secret: fc.string(), nodeAddress: fc.constant('http://node:5071'), serverAddress: fc.constantFrom('https://server', 'http://10.0.0.1:5080/') }),
          { nil: null },
        ),
        uiAccess: fc.constantFrom({ type: 'disabled' }, { type: 'open' }, { type: 'generated' }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(arb, (file) => {
        const r = parseConfigText(JSON.stringify({ version: 4, ...file }));
        expect(r.ok ? [] : r.faults).toEqual([]);
      }),
    );
  });
});
