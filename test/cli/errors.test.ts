// What a new user meets when something is wrong: one clear line, no stack trace, nothing created
// by a command that only reads.

import { generateKeyPairSync } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { createTestDatabase, pgAvailable } from '../support/postgres.js';
import { CLI_ARGS, cli, isOneLineError } from './support.js';

vi.setConfig({ testTimeout: 240_000 });

const dir = mkdtempSync(join(tmpdir(), 'bs-cli-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('read-only commands never create a database or a key', () => {
  const missing = join(dir, 'no-such-data');

  it.each([
    ['search', ['search', 'buildOutcome:failed', '--data', missing]],
    ['explain', ['explain', 'buildOutcome:failed', '--data', missing]],
    ['attestation', ['attestation', 'verify', join(dir, 'envelope.json'), '--data', missing]],
  ])('%s with a --data that does not exist refuses in one line', (command, args) => {
    const r = cli(args);
    expect(r.status).toBe(2);
    expect(isOneLineError(r.stderr, command), r.stderr).toBe(true);
    expect(r.stderr).toContain('no-such-data');
    expect(existsSync(missing)).toBe(false);
  });

  it('search without --data in a directory without ./.buildscope creates nothing there', () => {
    const cwd = join(dir, 'empty-cwd');
    mkdirSync(cwd);
    const r = cli(['search', 'buildOutcome:failed'], { cwd });
    expect(r.status).toBe(2);
    expect(isOneLineError(r.stderr, 'search'), r.stderr).toBe(true);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('attestation verify on a data directory without keys says so and writes no key', () => {
    const data = join(dir, 'data-without-keys');
    mkdirSync(data);
    const r = cli(['attestation', 'verify', join(dir, 'envelope.json'), '--data', data]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^buildscope attestation: cannot load the keys: no provenance keys in /);
    expect(readdirSync(data)).toEqual([]);
  });
});

describe.skipIf(!pgAvailable())('read-only commands on an empty PostgreSQL database', () => {
  it('search --db refuses and creates no table', async () => {
    const database = (await createTestDatabase())!;
    try {
      const r = cli(['search', 'buildOutcome:failed', '--db', database.url]);
      expect(r.status).toBe(2);
      expect(isOneLineError(r.stderr, 'search'), r.stderr).toBe(true);
      expect(r.stderr).toContain('holds no Buildscope database');
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const tables = await client.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
      await client.end();
      expect(tables.rows).toEqual([]);
    } finally {
      await database.drop();
    }
  });
});

describe('errors are one line without a stack trace', () => {
  const pem = join(dir, 'public.pem');
  writeFileSync(pem, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
  const notPem = join(dir, 'not.pem');
  writeFileSync(notPem, 'hello\n');

  it.each([
    ['refused PostgreSQL connection', 'search', ['search', 'buildTool:native', '--db', 'postgres://bs:secret@127.0.0.1:1/x'], /cannot connect to postgres:\/\/bs:\*\*\*@127\.0\.0\.1:1\/x: connection refused/],
    ['mysql:// URL', 'ingest', ['ingest', '-', '--db', 'mysql://127.0.0.1/x'], /not a PostgreSQL URL: mysql:\/\/127\.0\.0\.1\/x/],
    ['a directory given to ingest', 'ingest', ['ingest', dir, '--data', join(dir, 'd1')], /is a directory: give an NDJSON file, or - for standard input/],
    ['--port abc', 'serve', ['serve', '--port', 'abc', '--data', join(dir, 'd2')], /--port: not a port number: abc/],
    ['a non-PEM --key', 'attestation', ['attestation', 'verify', join(dir, 'x.json'), '--key', notPem], /not\.pem is not a PEM public key/],
  ])('%s', (_what, command, args, message) => {
    const r = cli(args);
    expect(r.status).not.toBe(0);
    expect(isOneLineError(r.stderr, command), r.stderr).toBe(true);
    expect(r.stderr).toMatch(message);
  });

  it('a missing envelope file is reported as unreadable (not as malformed), without a stack', () => {
    const r = cli(['attestation', 'verify', join(dir, 'missing.json'), '--key', pem]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^FAILED \(unreadable\): cannot read .*missing\.json: no such file or directory\n$/);
    expect(r.stderr).toBe('');
  });

  it('`| head` ends the command quietly (EPIPE)', () => {
    const r = spawnSync('sh', ['-c', `"${process.execPath}" ${CLI_ARGS.map((a) => `'${a}'`).join(' ')} demo-data --builds 20000 --seed 1 | head -c 100 >/dev/null`], {
      encoding: 'utf8',
      timeout: 180_000,
    });
    expect(r.stderr).toBe('');
  });

  it('serve on a port in use: one line, no JSON log line with a stack', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((ok) => blocker.listen(0, '127.0.0.1', ok));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const r = cli(['serve', '--port', String(port), '--data', join(dir, 'd3')]);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^buildscope serve: the server could not start: listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+$/m);
      expect(r.stderr).not.toMatch(/"stack"|\n\s+at /);
    } finally {
      blocker.close();
    }
  });
});
