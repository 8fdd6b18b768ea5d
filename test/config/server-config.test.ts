// The server's configuration file: every section is checked against its JSON Schema when the file
// is read, and every fault names its setting, what was found, a likely meant name for an unknown
// one, and its line and column in the file.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ConfigError, configFaults, configFromText, DEFAULT_LIMITS, faceSettings, parseConfig, serverConfigSchema } from '../../src/config.js';
import { parseExportOptions } from '../../src/export/options.js';
import { parseProvenanceConfig } from '../../src/provenance/config.js';
import { parseRetentionConfig } from '../../src/retention/config.js';
import { parseCacheNodesSection } from '../../src/cache-registry/config.js';
import { parsePlaygroundSection } from '../../src/config/playground.js';
import { cli } from '../cli/support.js';
import { parseConfigText } from '../../src/cache-node/config.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The one ConfigError a text gives, with its message. */
function refusal(text: string): ConfigError {
  try {
    configFromText(text, 'bad.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error(`accepted:\n${text}`);
}

// Per section: a misspelt setting, a value of the wrong type, a value out of range. The faulty
// value is always on the snippet's last line, after `: `.
const CASES: Record<string, { readonly unknown: readonly [string, string]; readonly type: readonly [string, string]; readonly range: readonly [string, string] }> = {
  server: {
    unknown: ['server:\n  prot: 8080', 'server.prot: unknown property (did you mean "port"?)'],
    type: ['server:\n  workers: two', 'server.workers: must be an integer, found string "two"'],
    range: ['server:\n  port: 70000', 'server.port: must be <= 65535, found 70000'],
  },
  bes: {
    unknown: ['bes:\n  maxMessageByte: 5000000', 'bes.maxMessageByte: unknown property (did you mean "maxMessageBytes"?)'],
    type: ['bes:\n  port: grpc', 'bes.port: must be an integer, found string "grpc"'],
    range: ['bes:\n  maxMessageBytes: 1000', 'bes.maxMessageBytes: must be >= 4194304, found 1000'],
  },
  database: {
    unknown: ['database:\n  dta: /srv/buildscope', 'database.dta: unknown property (did you mean "data"?)'],
    type: ['database:\n  data: 5', 'database.data: must be string, found integer 5'],
    range: ['database:\n  url: mysql://db/x', 'database.url: not a postgres:// URL: mysql://db/x'],
  },
  auth: {
    unknown: ['auth:\n  signingKey: database', 'auth.signingKey: unknown property (did you mean "signingKeys"?)'],
    type: ['auth:\n  signingKeys: [a, b]', 'auth.signingKeys: must be string, found array'],
    range: ["auth:\n  signingKeys: ''", 'auth.signingKeys: must not be empty'],
  },
  limits: {
    unknown: ['limits:\n  maxBuildMax: 10', 'limits.maxBuildMax: unknown property (did you mean "maxBuildsMax"?)'],
    type: ['limits:\n  maxWaitSecsMax: 1.5', 'limits.maxWaitSecsMax: must be an integer, found number 1.5'],
    range: ['limits:\n  tokenMaxHours: 48', 'limits.tokenMaxHours: must be <= 24, found 48'],
  },
  export: {
    unknown: ['export:\n  gzipLvl: 3', 'export.gzipLvl: unknown property (did you mean "gzipLevel"?)'],
    type: ['export:\n  anonymousAccess: yes', 'export.anonymousAccess: must be boolean, found string "yes"'],
    range: ['export:\n  gzipLevel: 0', 'export.gzipLevel: must be >= 1, found 0'],
  },
  provenance: {
    unknown: ['provenance:\n  polices: policies.yaml', 'provenance.polices: unknown property (did you mean "policies"?)'],
    type: ['provenance:\n  stores: obj:default', 'provenance.stores: must be a list, found string "obj:default"'],
    range: ['provenance:\n  pool:\n    size: 0', 'provenance.pool.size: must be >= 1, found 0'],
  },
  cacheNodes: {
    unknown: ['cacheNodes:\n  offlineAfterSecond: 60', 'cacheNodes.offlineAfterSecond: unknown property (did you mean "offlineAfterSeconds"?)'],
    type: ['cacheNodes:\n  offlineAfterSeconds: soon', 'cacheNodes.offlineAfterSeconds: must be an integer, found string "soon"'],
    range: ['cacheNodes:\n  offlineAfterSeconds: 0', 'cacheNodes.offlineAfterSeconds: must be >= 1, found 0'],
  },
  playground: {
    unknown: ['playground:\n  enable: true', 'playground.enable: unknown property (did you mean "enabled"?)'],
    type: ['playground:\n  enabled: maybe', 'playground.enabled: must be boolean, found string "maybe"'],
    range: ["playground:\n  root: ''", 'playground.root: must not be empty'],
  },
  retention: {
    unknown: ['retention:\n  maxAge: 90', 'retention.maxAge: unknown property (did you mean "maxAgeDays"?)'],
    type: ['retention:\n  maxAgeDays: soon', 'retention.maxAgeDays: must be an integer, found string "soon"'],
    range: ['retention:\n  minFreeDiskPercent: 100', 'retention.minFreeDiskPercent: must be < 100, found 100'],
  },
};

/** Line and column (1-based) of the value on a snippet's last line. */
function positionOfLastValue(text: string): { line: number; column: number } {
  const lines = text.split('\n');
  const last = lines[lines.length - 1]!;
  return { line: lines.length, column: last.indexOf(': ') + 3 };
}

describe('every section of the server configuration file', () => {
  it('has a case here, and no case names a section the schema lacks', () => {
    expect(Object.keys(CASES).sort()).toEqual(Object.keys(serverConfigSchema.properties).sort());
  });

  for (const [section, cases] of Object.entries(CASES)) {
    for (const kind of ['unknown', 'type', 'range'] as const) {
      const [text, message] = cases[kind];
      it(`${section}: ${kind === 'unknown' ? 'an unknown setting, with the name probably meant' : kind === 'type' ? 'a value of the wrong type' : 'a value out of range'}, at its line and column`, () => {
        const e = refusal(text);
        const { line, column } = positionOfLastValue(text);
        expect(e.message).toBe(`bad.yaml: ${message}${kind === 'unknown' ? e.message.slice(`bad.yaml: ${message}`.length, e.message.indexOf(' (line ')) : ''} (line ${line}, column ${column})`);
        expect(e.faults).toHaveLength(1);
        expect(e.faults[0]).toMatchObject({ line, column });
        expect(e.message).not.toContain('\n');
      });
    }
  }

  it('lists every fault of a file at once, each with its position, in one line', () => {
    const e = refusal(['server:', '  port: -1', 'export:', '  heartbeatMs: 1', 'retention:', '  maxAgeDays: 0'].join('\n'));
    expect(e.faults.map((f) => [f.path, f.line])).toEqual([
      ['server.port', 2],
      ['export.heartbeatMs', 4],
      ['retention.maxAgeDays', 6],
    ]);
    expect(e.message.split('; ')).toHaveLength(3);
  });

  it('checks what a schema cannot say, with positions too', () => {
    expect(refusal('limits:\n  maxBuildsMax: 10\n  maxBuildsDefault: 50').message).toBe(
      'bad.yaml: limits.maxBuildsDefault: is 50, which exceeds limits.maxBuildsMax (10) (line 3, column 21)',
    );
    expect(refusal('provenance:\n  stores:\n    - id: obj:a\n    - id: obj:a').message).toBe('bad.yaml: provenance.stores[1].id: obj:a is configured twice (line 4, column 11)');
    expect(refusal('database:\n  url: postgres://db/x\nretention:\n  minFreeDiskPercent: 5').faults[0]).toMatchObject({ path: 'retention.minFreeDiskPercent', line: 4 });
    expect(refusal('server:\n  publicUrl: ftp://scans.example.com').faults[0]).toMatchObject({ path: 'server.publicUrl', line: 2, column: 14 });
    expect(refusal('server: [').faults[0]).toMatchObject({ path: '(file)', line: 1 });
  });

  it('a configuration built in code has its face sections checked together, before a server uses them', () => {
    const config = parseConfig({ export: { gzipLevel: 0 }, cacheNodes: { offlineAfter: 60 }, retention: { maxAgeDays: 30 } });
    let error: unknown;
    try {
      faceSettings(config);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).faults.map((f) => f.path)).toEqual(['export.gzipLevel', 'cacheNodes.offlineAfter']);
    expect(faceSettings(parseConfig({ retention: { maxAgeDays: 30 } })).retention).toEqual({ maxAgeDays: 30 });
  });

  it('reads a setting without a value as its default', () => {
    const c = configFromText('server:\n  port:\nlimits:\nexport:\n  gzipLevel:\n', 'ok.yaml');
    expect(c.server.port).toBe(5080);
    expect(c.limits).toEqual(DEFAULT_LIMITS);
    expect(parseExportOptions(c.export).gzipLevel).toBe(1);
  });

  it('is a valid draft 2020-12 schema, identical to the committed schema/server-config.schema.json', () => {
    expect(new Ajv2020({ strict: false, validateFormats: false }).validateSchema(serverConfigSchema)).toBe(true);
    const committed = JSON.parse(readFileSync(join(import.meta.dirname, '../../schema/server-config.schema.json'), 'utf8')) as unknown;
    expect(committed).toEqual(JSON.parse(JSON.stringify(serverConfigSchema)));
  });
});

// ---- laws -------------------------------------------------------------------------------------

const int = (min: number, max: number) => fc.integer({ min, max });
const pair = (min: number, max: number) => fc.tuple(int(min, max), int(min, max)).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);
const percent = fc.double({ min: 0.5, max: 99.5, noNaN: true }).map((x) => Math.round(x * 10) / 10);

/** Valid files, each section present or not. */
const validFile = fc
  .record(
    {
      server: fc.record(
        { hostname: fc.constantFrom('localhost', 'scans.example.com'), host: fc.constantFrom('127.0.0.1', '0.0.0.0', '::'), port: int(0, 65_535), workers: int(1, 64), publicUrl: fc.constantFrom('https://scans.example.com', 'http://10.0.0.1:8080') },
        { requiredKeys: [] },
      ),
      bes: fc.record({ port: int(0, 65_535), maxMessageBytes: int(4 * 1024 * 1024, 2 ** 31 - 1) }, { requiredKeys: [] }),
      database: fc.oneof(fc.record({ data: fc.constantFrom('/srv/buildscope', './data') }), fc.record({ url: fc.constantFrom('postgres://db/buildscope', 'postgresql://u@h:5432/x') })),
      auth: fc.record({ signingKeys: fc.constantFrom('database', '/etc/buildscope/keys') }, { requiredKeys: [] }),
      limits: fc.tuple(pair(0, 1000), pair(1, 20), pair(1, 24), int(1, 36_500), int(1024, 1024 ** 3), int(1, 600_000)).map(([[bd, bm], [wd, wm], [td, tm], days, body, timeout]) => ({
        maxBuildsDefault: bd,
        maxBuildsMax: bm,
        maxWaitSecsDefault: wd,
        maxWaitSecsMax: wm,
        tokenDefaultHours: td,
        tokenMaxHours: tm,
        accessKeyDefaultDays: days,
        requestBodyBytes: body,
        searchTimeoutMs: timeout,
      })),
      export: fc.record(
        { heartbeatMs: int(10, 3_600_000), retryAfterSeconds: int(1, 86_400), anonymousAccess: fc.boolean(), corsOrigins: fc.oneof(fc.constant('*'), fc.constant(['https://a.example', 'http://b.example:8080'])), gzipLevel: int(1, 9) },
        { requiredKeys: [] },
      ),
      provenance: fc.record({ pool: fc.record({ size: int(1, 10_000), queue: int(0, 1_000_000) }, { requiredKeys: [] }), stores: fc.constant([{ id: 'obj:a' }, { id: 'repo:b', url: 'https://repo.example/att', timeoutMs: 500 }]) }, { requiredKeys: [] }),
      cacheNodes: fc.record({ offlineAfterSeconds: int(1, 2_592_000) }, { requiredKeys: [] }),
      playground: fc.record({ enabled: fc.boolean() }, { requiredKeys: [] }),
      retention: fc.tuple(int(1, 36_500), percent, percent).map(([days, a, b]) => ({ maxAgeDays: days, minFreeDiskPercent: Math.max(a, b), rejectBelowFreeDiskPercent: Math.min(a, b) })),
    },
    { requiredKeys: [] },
  )
  // Disk percentages need the embedded database (the server cannot see PostgreSQL's disk).
  .map((f) => ('retention' in f && f.database !== undefined && 'url' in f.database ? { ...f, retention: { maxAgeDays: f.retention!.maxAgeDays } } : f));

describe('laws of the configuration file', () => {
  it('every valid file is accepted, and every setting written comes back as written (property)', () => {
    fc.assert(
      fc.property(validFile, (file) => {
        expect(configFaults(file)).toEqual([]);
        const c = configFromText(stringify(file), 'file.yaml');
        const { publicUrl, ...server } = file.server ?? {};
        expect(c.server).toMatchObject(server);
        if (publicUrl !== undefined) expect(c.server.publicUrl).toBe(publicUrl);
        expect(c.bes.port).toBe(file.bes?.port ?? null);
        if (file.bes?.maxMessageBytes !== undefined) expect(c.bes.maxMessageBytes).toBe(file.bes.maxMessageBytes);
        expect(c.database).toEqual(file.database ?? { data: './.buildscope' });
        expect(c.limits).toEqual({ ...DEFAULT_LIMITS, ...file.limits });
        expect(parseExportOptions(c.export)).toMatchObject(file.export ?? {});
        const provenance = parseProvenanceConfig(c.provenance, '/data');
        expect(provenance.pool).toMatchObject(file.provenance?.pool ?? {});
        expect(parseCacheNodesSection(c.cacheNodes)).toEqual({ offlineAfterSeconds: 300, ...file.cacheNodes });
        expect(parsePlaygroundSection(c.playground)).toEqual({ enabled: true, ...file.playground });
        expect(parseRetentionConfig(c.retention, c.database)).toEqual(file.retention ?? {});
      }),
      { numRuns: 200 },
    );
  });

  it('a value pushed out of range is refused at its own line and column, whatever else the file holds (property)', () => {
    const outOfRange = fc.constantFrom(
      ['server', 'port', 65_536],
      ['server', 'workers', 0],
      ['bes', 'maxMessageBytes', 1],
      ['limits', 'maxBuildsMax', 1001],
      ['limits', 'searchTimeoutMs', 0],
      ['export', 'heartbeatMs', 5],
      ['export', 'gzipLevel', 10],
      ['cacheNodes', 'offlineAfterSeconds', 0],
      ['retention', 'maxAgeDays', 36_501] as const,
    );
    fc.assert(
      fc.property(validFile, outOfRange, (file, [section, key, value]) => {
        const bad = { ...file, [section]: { ...(file as Record<string, object | undefined>)[section], [key]: value } } as Record<string, Record<string, unknown>>;
        // Keep the faulty setting the only fault: lower the default that a raised maximum would clash with.
        if (section === 'limits') bad['limits'] = { ...bad['limits'], maxBuildsDefault: 0 };
        const text = stringify(bad);
        const e = refusal(text);
        expect(e.faults.map((f) => f.path)).toEqual([`${section}.${key}`]);
        const line = text.split('\n')[e.faults[0]!.line! - 1]!;
        expect(line.trim()).toBe(`${key}: ${value}`);
        expect(line.indexOf(`${value}`) + 1).toBe(e.faults[0]!.column);
      }),
      { numRuns: 200 },
    );
  });
});

describe('any text', () => {
  it('is either a configuration or one ConfigError whose faults all have a line, never another error (property)', () => {
    const sections = fc.constantFrom(...Object.keys(serverConfigSchema.properties), 'sever', 'limit');
    const yamlish = fc.oneof(
      fc.string(),
      fc.jsonValue({ maxDepth: 4 }).map((v) => stringify(v)),
      fc.dictionary(sections, fc.jsonValue({ maxDepth: 3 })).map((v) => stringify(v)),
      fc.dictionary(sections, fc.dictionary(fc.constantFrom('port', 'workers', 'heartbeatMs', 'stores', 'pool', 'maxAgeDays', 'keys', 'x'), fc.jsonValue({ maxDepth: 2 }))).map((v) => stringify(v)),
    );
    fc.assert(
      fc.property(yamlish, (text) => {
        try {
          configFromText(text, 'any.yaml');
        } catch (e) {
          expect(e).toBeInstanceOf(ConfigError);
          for (const f of (e as ConfigError).faults) expect(f.line, f.path).toBeGreaterThanOrEqual(1);
          expect((e as ConfigError).message).not.toContain('\n');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('an alias without its anchor is a fault at the alias, in both configuration files (it was a ReferenceError)', () => {
    expect(refusal('server:\n  port: *missing').faults[0]).toMatchObject({ path: '(file)', line: 2, column: 9 });
    const node = parseConfigText('version: 4\ncache: *missing\n');
    expect(node.ok ? [] : node.faults).toMatchObject([{ path: '(file)', line: 2, column: 8 }]);
  });
});

describe('buildscope serve with a bad configuration file', () => {
  it('ends with one line naming the setting and its position, exit status 2, before creating the data directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-config-cli-'));
    dirs.push(dir);
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'server:\n  port: 0\nexport:\n  heartbeatMS: 500\n');
    const data = join(dir, 'data');
    const r = cli(['serve', '--config', file, '--data', data]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`buildscope serve: ${file}: export.heartbeatMS: unknown property (did you mean "heartbeatMs"?); allowed here: heartbeatMs, retryAfterSeconds, anonymousAccess, corsOrigins, gzipLevel (line 4, column 16)\n`);
    expect(existsSync(data)).toBe(false);
  });
});

describe('secrets in files of their own', () => {
  const secretFile = (text: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-config-secret-'));
    dirs.push(dir);
    const file = join(dir, 'secret');
    writeFileSync(file, text, { mode: 0o600 });
    return file;
  };

  it("database.passwordFile: the password of url's user, percent-encoded into the URL", () => {
    const file = secretFile('p@ss:w/rd%\n');
    const c = configFromText(`database:\n  url: postgres://buildscope@db.example.com:5432/buildscope?sslmode=require\n  passwordFile: ${file}\n`, 'db.yaml');
    expect(c.database).toEqual({ url: 'postgres://buildscope:p%40ss%3Aw%2Frd%25@db.example.com:5432/buildscope?sslmode=require' });
    expect(decodeURIComponent(new URL(c.database.url!).password)).toBe('p@ss:w/rd%');
  });

  it('database.passwordFile: not with a password in url, not without url or its user, never an empty or missing file', () => {
    const file = secretFile('secret\n');
    expect(refusal(`database:\n  url: postgres://u:inline@db/x\n  passwordFile: ${file}`).message).toBe('bad.yaml: database: give the password either in url or in passwordFile, not both (line 2, column 3)');
    expect(refusal(`database:\n  passwordFile: ${file}`).message).toBe('bad.yaml: database.passwordFile: is the password of url, which is not given (line 2, column 17)');
    expect(refusal(`database:\n  url: postgres://db/x\n  passwordFile: ${file}`).faults[0]).toMatchObject({ path: 'database.url', line: 2 });
    expect(refusal(`database:\n  url: postgres://u@db/x\n  passwordFile: ${file}.gone`).message).toBe(`bad.yaml: database.passwordFile: cannot read ${file}.gone: no such file`);
    const empty = secretFile('');
    expect(refusal(`database:\n  url: postgres://u@db/x\n  passwordFile: ${empty}`).message).toBe(`bad.yaml: database.passwordFile: ${empty} is empty`);
  });

  it("provenance repo stores: passwordFile and tokenFile, each instead of its inline setting", () => {
    const password = secretFile('repo-password\n');
    const token = secretFile('repo-token\n');
    const p = parseProvenanceConfig({ stores: [{ id: 'repo:a', url: 'https://repo.example/a', username: 'u', passwordFile: password }, { id: 'repo:b', url: 'https://repo.example/b', tokenFile: token }] }, '/data');
    expect(p.stores).toMatchObject([{ username: 'u', password: 'repo-password' }, { token: 'repo-token' }]);
    expect(refusal(`provenance:\n  stores:\n    - id: repo:a\n      url: https://repo.example/a\n      token: t\n      tokenFile: ${token}`).message).toBe(
      'bad.yaml: provenance.stores[0]: give either token or tokenFile, not both (line 3, column 7)',
    );
    expect(() => parseProvenanceConfig({ stores: [{ id: 'repo:a', url: 'https://repo.example/a', tokenFile: `${token}.gone` }] }, '/data')).toThrow(`provenance.stores[0].tokenFile: cannot read ${token}.gone: no such file`);
  });
});
