// Requests refused before their body is read (413 on Content-Length, 401, 400 on the query) must
// reach every client as that answer, not as a broken pipe: the server reads (drains) the body
// first. Malformed request lines and request targets over 16 KB answer problem documents.
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheRegistryPlugin } from '../../src/http/cache-registry-plugin.js';
import { bearer, newLocation, startTestServer, type TestServer } from './support.js';

interface Outcome {
  readonly status?: number;
  readonly type?: string;
  readonly body?: string;
  readonly error?: string;
}

/**
 * Sends `size` bytes in 64 KiB writes, as a client that does not wait for an early answer, and
 * reports a broken connection if writing the body fails at any time, even after the answer came
 * (that is what a client such as Gradle or curl sees: the body could not be sent).
 */
function post(url: string, path: string, size: number, headers: Record<string, string>, method = 'POST'): Promise<Outcome> {
  return new Promise((resolve) => {
    let answer: Outcome | undefined;
    let sent = false;
    let failed: string | undefined;
    const settle = (): void => {
      if (failed !== undefined) resolve({ ...answer, error: failed });
      else if (answer !== undefined && sent) resolve(answer);
    };
    const req = request(url + path, { method, agent: false, headers: { 'content-length': String(size), ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        answer = { status: res.statusCode!, type: String(res.headers['content-type']), body };
        settle();
      });
      res.on('error', (e) => {
        failed ??= `response: ${e.message}`;
        settle();
      });
    });
    req.on('error', (e) => {
      failed ??= (e as NodeJS.ErrnoException).code ?? e.message;
      settle();
    });
    req.on('finish', () => {
      sent = true;
      settle();
    });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let left = size;
    const write = (): void => {
      while (left > 0 && failed === undefined) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', write);
          return;
        }
      }
      if (failed === undefined) req.end();
    };
    write();
  });
}

/** Sends raw bytes and reads the whole answer, until the server closes the connection. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (c) => (out += c.toString('latin1')));
    socket.on('end', () => resolve(out));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe('requests refused before their body is read', { timeout: 120_000 }, () => {
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startTestServer(await newLocation('sqlite'), { plugins: [cacheRegistryPlugin], raw: { limits: { requestBodyBytes: 64 * 1024, ingestBodyBytes: 256 * 1024 } } });
    key = await s.user('admin', ['accessBuildDataViaApi', 'publishScan']);
  });
  afterAll(() => s?.close());

  const expectAll = (outcomes: readonly Outcome[], status: number, alternative = status) => {
    const errors = outcomes.filter((o) => o.error !== undefined).map((o) => o.error);
    expect(errors, `${errors.length} of ${outcomes.length} clients saw a broken connection`).toEqual([]);
    for (const o of outcomes) {
      expect([status, alternative]).toContain(o.status);
      expect(o.type).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(o.body!).status).toBe(o.status);
    }
  };

  it('413 for an ingest body over the limit reaches 20 concurrent clients', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => post(s.url, '/api/builds', 2 * 1024 * 1024, { authorization: bearer(key), 'content-type': 'application/x-ndjson' })),
    );
    expectAll(outcomes, 413);
  });

  it('413 for a JSON body over requestBodyBytes (refused on Content-Length) reaches 20 concurrent clients', async () => {
    expectAll(await Promise.all(Array.from({ length: 20 }, () => post(s.url, '/api/build-cache/node-status', 4 * 1024 * 1024, { 'content-type': 'application/json' }, 'PUT'))), 413);
  });

  it('404 (or 413 for the size) for a body sent to no route reaches 20 concurrent clients', async () => {
    expectAll(await Promise.all(Array.from({ length: 20 }, () => post(s.url, '/api/nothing', 4 * 1024 * 1024, { 'content-type': 'application/json' }))), 404, 413);
  });

  it('401 without credentials and 400 for a bad query, before the body, reach 20 concurrent clients', async () => {
    expectAll(await Promise.all(Array.from({ length: 20 }, () => post(s.url, '/api/builds', 4 * 1024 * 1024, { 'content-type': 'application/x-ndjson' }))), 401);
    expectAll(await Promise.all(Array.from({ length: 20 }, () => post(s.url, '/api/auth/token?expiresInHours=abc', 4 * 1024 * 1024, { authorization: bearer(key), 'content-type': 'application/json' }))), 400);
  });

  it('does not read a body declared larger than it drains: answers at once and closes the connection', async () => {
    const port = Number(new URL(s.url).port);
    const answer = await raw(port, `POST /api/builds HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: ${200 * 1024 * 1024}\r\n\r\n{}`);
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
  });

  it('answers a malformed request line and a request target over 16 KB with problem documents', async () => {
    const port = Number(new URL(s.url).port);
    const badLine = await raw(port, 'GARBAGE\r\n\r\n');
    expect(badLine).toMatch(/^HTTP\/1\.1 400/);
    expect(badLine).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(badLine.slice(badLine.indexOf('\r\n\r\n') + 4))).toMatchObject({ type: 'urn:buildscope:problem:malformed-request', status: 400 });

    const long = await raw(port, `GET /api/builds?query=${'a'.repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(long).toMatch(/^HTTP\/1\.1 414/);
    expect(long).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(long.slice(long.indexOf('\r\n\r\n') + 4))).toMatchObject({ type: 'urn:buildscope:problem:uri-too-long', status: 414 });

    const headers = await raw(port, `GET /api/version HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\nConnection: close\r\n\r\n`);
    expect(headers).toMatch(/^HTTP\/1\.1 431/);
    expect(JSON.parse(headers.slice(headers.indexOf('\r\n\r\n') + 4))).toMatchObject({ type: 'urn:buildscope:problem:header-fields-too-large', status: 431 });
  });
});
