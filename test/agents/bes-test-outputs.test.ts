// The Build Event Service endpoint's reader of Bazel's test outputs (src/bes/test-outputs.ts)
// against a real cache node over gRPC: a configured node's blobs are read with its credentials and
// checked against their digests; hosts that are not configured are never connected to (a
// listening socket counts the attempts); sizes, counts, bytes per invocation and the deadline are
// bounded; and a build made from what was read says which outputs were not read and why.

import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { bepToBuild, type TimedBepEvent } from '../../src/bes/bep-build.js';
import { createTestOutputReader, parseBytestreamUri, readFetched, type TestOutputReaderOptions } from '../../src/bes/test-outputs.js';
import { fastHash, startTestNode, type TestNode } from '../cache-node/helpers.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('reading test outputs from cache nodes', () => {
  let t: TestNode;
  let grpcAddress: string;
  /** A listener on another port: any connection to it is a request the reader must not make. */
  let trap: Server;
  let trapAddress: string;
  const trapped: Socket[] = [];
  /** A gRPC server whose ByteStream.Read answers 14 wrong bytes to every read, or never answers (`hang` in the resource name). */
  let fake: grpc.Server;
  let fakeAddress: string;

  const options = (more: Partial<TestOutputReaderOptions> = {}): TestOutputReaderOptions => ({
    cacheNodes: [{ address: grpcAddress, user: 'reader', password: 'reader-password' }],
    testOutputMaxBytes: 64 * 1024,
    testOutputsPerInvocation: 16,
    testOutputTimeoutSeconds: 10,
    ...more,
  });

  async function put(data: Buffer): Promise<string> {
    const hash = sha256(data);
    const r = await fetch(`${t.node.url}/cas/${hash}`, { method: 'PUT', body: new Uint8Array(data), headers: { authorization: `Basic ${Buffer.from('ci:ci-password').toString('base64')}` } });
    expect(r.status).toBe(204);
    return `bytestream://${grpcAddress}/blobs/${hash}/${data.length}`;
  }

  beforeAll(async () => {
    t = await startTestNode(
      {
        version: 4,
        cache: {
          accessControl: {
            anonymousLevel: 'none',
            users: { ci: { level: 'readwrite', password: await fastHash('ci-password') }, reader: { level: 'read', password: await fastHash('reader-password') } },
          },
        },
        uiAccess: { type: 'open' },
      },
      { grpcPort: 0 },
    );
    grpcAddress = t.node.grpcUrl!.replace(/^grpc:\/\//, '');
    trap = createServer((s) => {
      trapped.push(s);
      s.destroy();
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    trapAddress = `127.0.0.1:${(trap.address() as { port: number }).port}`;
    fake = new grpc.Server();
    const raw = (b: Buffer) => b;
    fake.addService(
      { Read: { path: '/google.bytestream.ByteStream/Read', requestStream: false, responseStream: true, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw } },
      {
        Read(call: grpc.ServerWritableStream<Buffer, Buffer>) {
          if (call.request.includes('hang')) return; // never answers
          const data = Buffer.from('not the bytes!');
          call.write(Buffer.concat([Buffer.from([(10 << 3) | 2, data.length]), data]));
          call.end();
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) => fake.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
    fakeAddress = `127.0.0.1:${port}`;
  }, 60_000);

  afterAll(async () => {
    fake?.forceShutdown();
    await new Promise((resolve) => trap?.close(resolve));
    await t?.close();
  });

  it('parses bytestream URIs, with and without an instance name, and refuses anything else', () => {
    const hash = 'a'.repeat(64);
    expect(parseBytestreamUri(`bytestream://Cache.Example.com:5072/blobs/${hash}/12`)).toEqual({ authority: 'cache.example.com:5072', resourceName: `blobs/${hash}/12`, hash, size: 12 });
    expect(parseBytestreamUri(`bytestream://cache:5072/main/blobs/${hash}/12`)?.resourceName).toBe(`main/blobs/${hash}/12`);
    for (const bad of [`bytestream://user:pw@cache:5072/blobs/${hash}/12`, `bytestream://cache:5072/blobs/${hash}/12?x=1`, `bytestream://cache:5072/blobs/xyz/12`, `bytestream://cache:5072/a%2F..%2Fb/blobs/${hash}/1`, `http://cache:5072/blobs/${hash}/12`]) {
      expect(parseBytestreamUri(bad), bad).toBeUndefined();
    }
  });

  it("reads a configured node's blobs with its credentials, checked against their digests", async () => {
    const log = Buffer.from('greeting test failed on purpose\n');
    const xml = Buffer.from('<testsuites><testsuite name="s"><testcase name="c"/></testsuite></testsuites>');
    const [logUri, xmlUri] = [await put(log), await put(xml)];
    const reader = createTestOutputReader(options());
    try {
      const got = await reader.fetch([logUri, xmlUri]);
      expect(got.get(logUri)).toEqual({ text: log.toString() });
      expect(got.get(xmlUri)).toEqual({ text: xml.toString() });
      // A URI whose size is not the blob's: the node has no such blob.
      const data = randomBytes(100);
      const uri = await put(data);
      const short = uri.replace(/\/100$/, '/50');
      expect((await reader.fetch([short])).get(short)).toEqual({ unread: 'notFound' });
      // Not held by the node.
      const missing = `bytestream://${grpcAddress}/blobs/${sha256(randomBytes(8))}/8`;
      expect((await reader.fetch([missing])).get(missing)).toEqual({ unread: 'notFound' });
    } finally {
      reader.close();
    }
    // A node answering other bytes than the digest's, or more of them than it states: not read.
    const liar = createTestOutputReader(options({ cacheNodes: [{ address: fakeAddress }] }));
    try {
      const wrong = `bytestream://${fakeAddress}/blobs/${sha256(Buffer.from('the real bytes'))}/14`;
      const more = `bytestream://${fakeAddress}/blobs/${sha256(Buffer.from('the'))}/3`;
      const got = await liar.fetch([wrong, more]);
      expect(got.get(wrong)).toEqual({ unread: 'failed' });
      expect(got.get(more)).toEqual({ unread: 'failed' });
    } finally {
      liar.close();
    }
    // Wrong credentials.
    const wrong = createTestOutputReader(options({ cacheNodes: [{ address: grpcAddress, user: 'reader', password: 'not-the-password' }] }));
    try {
      expect((await wrong.fetch([logUri])).get(logUri)).toEqual({ unread: 'denied' });
    } finally {
      wrong.close();
    }
  }, 60_000);

  it('reads with the password of a passwordFile, as the configuration loads it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-bes-password-'));
    try {
      const file = join(dir, 'cache-node-password');
      writeFileSync(file, 'reader-password\n', { mode: 0o600 });
      const { cacheNodes } = parseConfig({ bes: { cacheNodes: [{ address: grpcAddress, user: 'reader', passwordFile: file }] } }).bes;
      const log = Buffer.from('read with a password from a file\n');
      const uri = await put(log);
      const reader = createTestOutputReader(options({ cacheNodes }));
      try {
        expect((await reader.fetch([uri])).get(uri)).toEqual({ text: log.toString() });
      } finally {
        reader.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('never connects to a host that is not configured, whatever the URI names', async () => {
    const data = Buffer.from('secret of another host');
    const uri = await put(data);
    const hash = sha256(data);
    const reader = createTestOutputReader(options());
    try {
      const others = [
        `bytestream://${trapAddress}/blobs/${hash}/${data.length}`,
        `bytestream://${trapAddress}/main/blobs/${hash}/${data.length}`,
        `bytestream://localhost:${grpcAddress.split(':')[1]}/blobs/${hash}/${data.length}`, // the same node by another name
        `bytestream://169.254.169.254:80/blobs/${hash}/${data.length}`,
      ];
      const got = await reader.fetch([...others, `bytestream://reader:reader-password@${grpcAddress}/blobs/${hash}/${data.length}`, 'file:///etc/passwd', 'https://example.com/x', uri]);
      for (const o of others) expect(got.get(o), o).toEqual({ unread: 'otherCache' });
      expect(got.get(`bytestream://reader:reader-password@${grpcAddress}/blobs/${hash}/${data.length}`)).toEqual({ unread: 'unsupported' });
      expect(got.get('file:///etc/passwd')).toEqual({ unread: 'clientFile' });
      expect(got.get('https://example.com/x')).toEqual({ unread: 'unsupported' });
      expect(got.get(uri)).toEqual({ text: data.toString() });
    } finally {
      reader.close();
    }
    // The configured node answered; the trap saw nothing (its connections would be counted by now:
    // the reads were done in the same order and a connection attempt precedes any answer).
    expect(trapped).toHaveLength(0);
    // Without any node configured nothing is read at all.
    const none = createTestOutputReader(options({ cacheNodes: [] }));
    expect((await none.fetch([uri])).get(uri)).toEqual({ unread: 'otherCache' });
    none.close();
  }, 60_000);

  it('bounds each file, the files and bytes of an invocation, and the time', async () => {
    const small = await Promise.all([0, 1, 2, 3].map((i) => put(Buffer.from(`log ${i} `.repeat(100)))));
    const reader = createTestOutputReader(options({ testOutputMaxBytes: 1024, testOutputsPerInvocation: 2 }));
    try {
      // Larger than testOutputMaxBytes by the URI's own size: refused before any read.
      const large = `bytestream://${grpcAddress}/blobs/${sha256(Buffer.alloc(2048))}/2048`;
      const got = await reader.fetch([large, ...small]);
      expect(got.get(large)).toEqual({ unread: 'tooLarge' });
      expect(small.map((u) => got.get(u))).toEqual([{ text: 'log 0 '.repeat(100) }, { text: 'log 1 '.repeat(100) }, { unread: 'limit' }, { unread: 'limit' }]);
    } finally {
      reader.close();
    }
    const byBytes = createTestOutputReader({ ...options(), maxBytesPerInvocation: 1000 });
    try {
      const got = await byBytes.fetch(small); // 600 bytes each
      expect(small.map((u) => Object.keys(got.get(u)!)[0])).toEqual(['text', 'unread', 'unread', 'unread']);
    } finally {
      byBytes.close();
    }
    // A node that never answers: given up at the deadline.
    const hash = sha256(Buffer.from('x'));
    const hanging = `bytestream://${fakeAddress}/hang/blobs/${hash}/1`;
    const slow = createTestOutputReader(options({ cacheNodes: [{ address: fakeAddress }], testOutputTimeoutSeconds: 1 }));
    try {
      const started = Date.now();
      const got = await slow.fetch([hanging, hanging.replace(/\/1$/, '/2')]);
      expect(got.get(hanging)).toEqual({ unread: 'timeout' });
      expect(got.get(hanging.replace(/\/1$/, '/2'))).toEqual({ unread: 'timeout' });
      expect(Date.now() - started).toBeLessThan(8000);
    } finally {
      slow.close();
    }
  }, 60_000);

  it("makes a build whose tests say which outputs were not read and why, and use what was", async () => {
    const xml = Buffer.from(
      '<testsuites><testsuite name="greeting_test"><testcase name="greeting_test" classname="greeting_test" time="0.1"><failure message="exited with error code 1"/></testcase></testsuite></testsuites>',
    );
    const log = Buffer.from('greeting test failed on purpose\n');
    const [xmlUri, logUri] = [await put(xml), await put(log)];
    const started: TimedBepEvent = { event: { id: { started: {} }, started: { uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', startTimeMillis: '1000', command: 'test' } } };
    const finished: TimedBepEvent = { event: { id: { buildFinished: {} }, finished: { finishTimeMillis: '9000', exitCode: { name: 'TESTS_FAILED', code: 3 } } } };
    const result = (label: string, outputs: Record<string, string>): TimedBepEvent => ({
      event: {
        id: { testResult: { label, run: 1, shard: 1, attempt: 1 } },
        testResult: { status: 'FAILED', testAttemptStartMillisEpoch: '2000', testAttemptDurationMillis: '200', testActionOutput: Object.entries(outputs).map(([name, uri]) => ({ name, uri })) },
      },
    });
    const elsewhere = `bytestream://other-cache.example.com:5072/blobs/${sha256(xml)}/${xml.length}`;
    const elsewhereLog = `bytestream://other-cache.example.com:5072/blobs/${sha256(log)}/${log.length}`;
    const events = [started, result('//:ours', { 'test.xml': xmlUri, 'test.log': logUri }), result('//:theirs', { 'test.xml': elsewhere, 'test.log': elsewhereLog }), finished];
    const reader = createTestOutputReader(options());
    try {
      const fetched = await reader.fetch([xmlUri, logUri, elsewhere, elsewhereLog]);
      const tests = bepToBuild(events, 'abcdefghijklm', { readUri: readFetched(fetched) }).events.filter((e) => e.type.eventType.startsWith('Test'));
      const ours = tests.filter((e) => e.type.eventType === 'TestFinished' && String(e.data['id']).startsWith('//:ours'));
      expect(ours.map((e) => e.data)).toEqual([{ id: '//:ours#1.1.1:0', outcome: 'failed', attempt: 1, failure: { message: 'exited with error code 1' } }]);
      expect(tests.find((e) => e.type.eventType === 'TestOutput' && e.data['id'] === '//:ours#1.1.1:0')!.data['text']).toBe('greeting test failed on purpose');
      const theirs = tests.find((e) => e.type.eventType === 'TestFinished' && String(e.data['id']).startsWith('//:theirs'))!;
      expect(theirs.data).toMatchObject({ outcome: 'failed', failure: { message: '//:theirs FAILED' } });
      expect((theirs.data['unreadOutputs'] as { name: string; reason: string }[]).map((u) => [u.name, u.reason])).toEqual([
        ['test.log', 'otherCache'],
        ['test.xml', 'otherCache'],
      ]);
    } finally {
      reader.close();
    }
  }, 60_000);
});
