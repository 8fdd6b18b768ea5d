// The YAML configuration: defaults, overrides, face sections passed through, clear errors.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ConfigError, configFromCli, defaultConfig, DEFAULT_LIMITS, loadConfig, parseConfig } from '../../src/config.js';

describe('server configuration', () => {
  it('has defaults for everything', () => {
    const c = defaultConfig();
    expect(c.server).toEqual({ hostname: 'localhost', host: '127.0.0.1', port: 5080, workers: 1, stopTimeoutSeconds: 30 });
    expect(c.database).toEqual({ data: './.buildscope' });
    expect(c.auth.signingKeys).toEqual({ kind: 'database' });
    expect(c.limits).toEqual(DEFAULT_LIMITS);
    expect(c.limits).toMatchObject({ maxBuildsDefault: 100, maxBuildsMax: 1000, maxWaitSecsDefault: 3, maxWaitSecsMax: 20, tokenDefaultHours: 2, tokenMaxHours: 24, accessKeyDefaultDays: 365 });
  });

  it('reads a full YAML file, every face section checked, and hands face sections to their faces as written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'buildscope-config-'));
    const file = join(dir, 'buildscope.yaml');
    writeFileSync(
      file,
      `server:
  hostname: scans.example.com
  host: 0.0.0.0
  port: 8080
  workers: 2
  stopTimeoutSeconds: 60
database:
  url: postgres://buildscope@db.example.com/buildscope
auth:
  signingKeys: /etc/buildscope/keys
limits:
  maxBuildsDefault: 50
  tokenMaxHours: 12
  tokenDefaultHours: 1
export:
  heartbeatMs: 5000
provenance:
  pool: { size: 4 }
cacheNodes: {}
playground:
  enabled: false
`,
    );
    const c = loadConfig(file);
    expect(c.server).toEqual({ hostname: 'scans.example.com', host: '0.0.0.0', port: 8080, workers: 2, stopTimeoutSeconds: 60 });
    expect(c.database).toEqual({ url: 'postgres://buildscope@db.example.com/buildscope' });
    expect(c.auth.signingKeys).toEqual({ kind: 'directory', path: '/etc/buildscope/keys' });
    expect(c.limits.maxBuildsDefault).toBe(50);
    expect(c.limits.tokenMaxHours).toBe(12);
    expect(c.export).toEqual({ heartbeatMs: 5000 });
    expect(c.provenance).toEqual({ pool: { size: 4 } });
    expect(c.cacheNodes).toEqual({});
    expect(c.playground).toEqual({ enabled: false });
    // Command-line options win; --data replaces a configured URL.
    const o = configFromCli({ config: file, data: '/tmp/x', port: '0', host: '127.0.0.1' });
    expect(o.database).toEqual({ data: '/tmp/x' });
    expect(o.server.port).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses unknown settings, wrong types and limits beyond what the API promises', () => {
    const bad: [unknown, RegExp][] = [
      [{ sever: {} }, /sever: unknown property \(did you mean "server"\?\)/],
      [{ server: { prot: 1 } }, /server\.prot: unknown property \(did you mean "port"\?\)/],
      [{ server: { port: 70000 } }, /server\.port: must be <= 65535, found 70000/],
      [{ server: { workers: 0 } }, /server\.workers: must be >= 1, found 0/],
      [{ server: { stopTimeoutSeconds: 0 } }, /server\.stopTimeoutSeconds: must be >= 1, found 0/],
      [{ server: { hostname: '' } }, /server\.hostname: must not be empty/],
      [{ database: { url: 'mysql://x' } }, /not a postgres/],
      [{ database: { url: 'postgres://x/y', data: '/d' } }, /either data or url/],
      [{ limits: { maxBuildsMax: 5000 } }, /limits\.maxBuildsMax: must be <= 1000, found 5000/],
      [{ limits: { tokenMaxHours: 48 } }, /limits\.tokenMaxHours: must be <= 24, found 48/],
      [{ limits: { maxWaitSecsMax: 60 } }, /limits\.maxWaitSecsMax: must be <= 20, found 60/],
      [{ limits: { maxBuildsDefault: 500, maxBuildsMax: 100 } }, /exceeds/],
      [[], /must be an object, found array/],
      ['text', /must be an object, found string "text"/],
    ];
    for (const [raw, message] of bad) expect(() => parseConfig(raw), JSON.stringify(raw)).toThrow(message);
    expect(() => loadConfig('/nonexistent/buildscope.yaml')).toThrow(ConfigError);
  });

  it('either accepts a configuration or throws a ConfigError, never anything else', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (raw) => {
        try {
          parseConfig(raw);
        } catch (e) {
          expect(e).toBeInstanceOf(ConfigError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
