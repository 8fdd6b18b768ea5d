// The Build Event Service setting: `bes` in the configuration and `serve --bes-port`, off by
// default, checked like every other setting, and announced by a real `serve` at start.

import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, configFromCli, configFromText, parseConfig } from '../../src/config.js';
import { run } from './support.js';
import { CLI } from '../support/compiled-cli.js';

describe('bes configuration', () => {
  it('is off by default and takes a port and a message limit', () => {
    expect(parseConfig({}).bes).toMatchObject({ port: null, maxMessageBytes: 16 * 1024 * 1024, cacheNodes: [], testOutputMaxBytes: 8 * 1024 * 1024, testOutputsPerInvocation: 16, testOutputTimeoutSeconds: 10 });
    expect(parseConfig({ bes: { port: 5081, maxMessageBytes: 8 * 1024 * 1024 } }).bes).toMatchObject({ port: 5081, maxMessageBytes: 8 * 1024 * 1024 });
    expect(configFromCli({ besPort: '0' }).bes.port).toBe(0);
  });

  it('refuses bad values with their path', () => {
    expect(() => parseConfig({ bes: { port: 70000 } })).toThrow(/bes\.port: must be <= 65535, found 70000/);
    expect(() => parseConfig({ bes: { prot: 1 } })).toThrow(/bes\.prot: unknown property \(did you mean "port"\?\)/);
    expect(() => parseConfig({ bes: { maxMessageBytes: 1000 } })).toThrow(ConfigError);
    expect(() => configFromCli({ besPort: 'x' })).toThrow(/--bes-port: not a port number: x/);
  });

  it('takes the cache nodes whose test outputs the endpoint reads, and refuses addresses that are not host:port', () => {
    const nodes = [{ address: 'cache.example.com:5072', user: 'buildscope', password: 'secret' }, { address: '[::1]:5072' }, { address: '10.0.0.5:9092' }];
    expect(parseConfig({ bes: { cacheNodes: nodes } }).bes.cacheNodes).toEqual(nodes);
    for (const address of ['cache.example.com', 'grpc://cache.example.com:5072', 'user@cache:5072', 'cache:5072/instance']) {
      expect(() => parseConfig({ bes: { cacheNodes: [{ address }] } }), address).toThrow(/bes\.cacheNodes\[0\]\.address/);
    }
    expect(() => parseConfig({ bes: { cacheNodes: [{ address: 'cache:5072', user: 'buildscope' }] } })).toThrow(/bes\.cacheNodes\[0\]/);
    expect(() => parseConfig({ bes: { cacheNodes: [{ address: 'cache:5072', url: 'x' }] } })).toThrow(/bes\.cacheNodes\[0\]\.url: unknown property/);
    expect(() => parseConfig({ bes: { testOutputMaxBytes: 128 * 1024 * 1024 } })).toThrow(/bes\.testOutputMaxBytes/);
  });

  describe("a node's password in a file of its own (passwordFile)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-bes-secret-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const secret = (name: string, text: string) => {
      const file = join(dir, name);
      writeFileSync(file, text);
      chmodSync(file, 0o600);
      return file;
    };
    const yaml = (node: string) => `bes:\n  cacheNodes:\n    - address: cache.example.com:5072\n${node}`;

    it('reads the file once at load, its trailing newline dropped', () => {
      const file = secret('node-password', 'pa:ss word\n');
      const c = configFromText(yaml(`      user: buildscope\n      passwordFile: ${file}\n`), 'bs.yaml');
      expect(c.bes.cacheNodes).toEqual([{ address: 'cache.example.com:5072', user: 'buildscope', password: 'pa:ss word' }]);
      // Only the one newline: a password may end in spaces, and a CRLF file is the same password.
      expect(parseConfig({ bes: { cacheNodes: [{ address: 'c:1', user: 'u', passwordFile: secret('crlf', 'x \r\n') }] } }).bes.cacheNodes[0]?.password).toBe('x ');
    });

    it('takes exactly one of password and passwordFile with a user, and neither without one', () => {
      const file = secret('both', 'p\n');
      expect(() => configFromText(yaml(`      user: buildscope\n      password: p\n      passwordFile: ${file}\n`), 'bs.yaml')).toThrow(
        /^bs\.yaml: bes\.cacheNodes\[0\]: give either password or passwordFile, not both \(line 3, column 7\)$/,
      );
      expect(() => configFromText(yaml('      user: buildscope\n'), 'bs.yaml')).toThrow(/^bs\.yaml: bes\.cacheNodes\[0\]: give password or passwordFile \(line 3, column 7\)$/);
      expect(() => parseConfig({ bes: { cacheNodes: [{ address: 'c:1', passwordFile: file }] } })).toThrow(/bes\.cacheNodes\[0\]: must have property user when property passwordFile is present/);
    });

    it('refuses a missing or empty file in one line naming the setting and the file', () => {
      const missing = join(dir, 'no-such-file');
      let e1: unknown;
      try {
        configFromText(yaml(`      user: buildscope\n      passwordFile: ${missing}\n`), 'bs.yaml');
      } catch (e) {
        e1 = e;
      }
      expect(e1).toBeInstanceOf(ConfigError);
      expect((e1 as Error).message).toBe(`bs.yaml: bes.cacheNodes[0].passwordFile: cannot read ${missing}: no such file`);
      const empty = secret('empty', '\n');
      expect(() => configFromText(yaml(`      user: buildscope\n      passwordFile: ${empty}\n`), 'bs.yaml')).toThrow(`bs.yaml: bes.cacheNodes[0].passwordFile: ${empty} is empty`);
      expect(() => parseConfig({ bes: { cacheNodes: [{ address: 'c:1', user: 'u', passwordFile: dir }] } })).toThrow(`bes.cacheNodes[0].passwordFile: cannot read ${dir}: a directory, not a file`);
    });

    it('serve with a missing password file ends with one line, exit status 2', async () => {
      const config = secret('bs.yaml', yaml(`      user: buildscope\n      passwordFile: ${join(dir, 'gone')}\n`));
      const r = await run(process.execPath, [...CLI, 'serve', '--config', config, '--data', join(dir, 'never-created')]);
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(`buildscope serve: ${config}: bes.cacheNodes[0].passwordFile: cannot read ${join(dir, 'gone')}: no such file\n`);
    }, 60_000);
  });

  it('serve --bes-port with a bad port ends with one line', async () => {
    const r = await run(process.execPath, [...CLI, 'serve', '--bes-port', 'abc', '--data', '/nonexistent-never-created']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('buildscope serve: --bes-port: not a port number: abc\n');
  }, 60_000);

  it('serve --bes-port 0 starts the endpoint and prints how to point Bazel at it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-bes-serve-'));
    const child = spawn(process.execPath, [...CLI, 'serve', '--port', '0', '--bes-port', '0', '--data', join(dir, 'data')], {
      env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'warn' },
    });
    try {
      const line = await new Promise<string>((done, fail) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /^Bazel Build Event Service at .*$/m.exec(out);
          if (m) done(m[0]);
        });
        child.on('close', () => fail(new Error(`serve exited: ${out}`)));
      });
      expect(line).toMatch(/^Bazel Build Event Service at grpc:\/\/127\.0\.0\.1:\d+ — bazel build \/\/\.\.\. --bes_backend=grpc:\/\/127\.0\.0\.1:\d+ --bes_header=Authorization=Bearer\\ <access key> --bes_results_url=http:\/\/127\.0\.0\.1:\d+\/builds\/bazel\/ \(Bazel 4: --bes_keywords=buildscope_access_key=<access key>\)$/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((done) => child.on('close', done));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
