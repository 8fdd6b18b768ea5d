// A node process killed with SIGKILL while Bazel-style uploads are in flight (HTTP /cas/ PUTs and
// a ByteStream write over gRPC): after a restart every upload that was acknowledged reads back
// with its digest, the action result naming them is a hit, and nothing half-written is served.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, describe, expect, it } from 'vitest';
import { PROTO_DIR } from '../../src/cache-node/proto.js';
import { sha256Hex } from '../../src/cache-node/digest.js';
import { actionKey, actionResult, blob, type Blob } from './bazel-support.js';
import { CLI } from '../support/compiled-cli.js';
import { waitFor } from '../support/wait.js';

const root = join(import.meta.dirname, '../..');

function serve(config: string, data: string): { child: ChildProcess; urls: Promise<{ url: string; grpcUrl: string }> } {
  const child = spawn(process.execPath, [...CLI, 'cache-node', '--config', config, '--port', '0', '--grpc-port', '0', '--data', data], {
    cwd: root,
    env: { ...process.env, BUILDSCOPE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const urls = new Promise<{ url: string; grpcUrl: string }>((resolve, reject) => {
    let buf = '';
    const log: string[] = [];
    child.stderr!.on('data', (c: Buffer) => {
      buf += c.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        log.push(line);
        if (line.includes('"cache node listening"')) resolve(JSON.parse(line) as { url: string; grpcUrl: string });
      }
    });
    child.once('exit', (code) => reject(new Error(`node exited (${code}): ${log.join('\n')}`)));
  });
  return { child, urls };
}

describe('kill -9 during Bazel uploads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cache-node-bazel-kill-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every acknowledged upload intact and serves nothing half-written', async () => {
    const config = join(dir, 'node.json');
    writeFileSync(config, JSON.stringify({ version: 4, cache: { accessControl: { anonymousLevel: 'readwrite' } }, uiAccess: { type: 'open' } }));
    const data = join(dir, 'data');
    const first = serve(config, data);
    const { url, grpcUrl } = await first.urls;
    const acknowledged: Blob[] = [];
    for (let i = 0; i < 20; i++) {
      const b = blob(randomBytes(50_000 + i * 10_000));
      const r = await fetch(`${url}/cas/${b.hash}`, { method: 'PUT', body: new Uint8Array(b.data) });
      expect(r.status).toBe(204);
      acknowledged.push(b);
    }
    const key = actionKey();
    expect((await fetch(`${url}/ac/${key}`, { method: 'PUT', body: new Uint8Array(actionResult({ files: acknowledged })) })).status).toBe(204);

    // In flight at the kill: an HTTP PUT with half its body, and a ByteStream write with a part.
    const halfHttp = blob(randomBytes(4 * 1024 * 1024));
    const put = request(`${url}/cas/${halfHttp.hash}`, { method: 'PUT', headers: { 'content-length': String(halfHttp.size) } });
    put.on('error', () => undefined);
    put.write(halfHttp.data.subarray(0, 2 * 1024 * 1024));
    const definition = protoLoader.loadSync('bytestream.proto', { includeDirs: [PROTO_DIR], longs: Number });
    const ByteStream = (grpc.loadPackageDefinition(definition) as any)['google']['bytestream']['ByteStream']; // eslint-disable-line @typescript-eslint/no-explicit-any
    const bs = new ByteStream(grpcUrl.replace('grpc://', ''), grpc.credentials.createInsecure());
    const halfGrpc = blob(randomBytes(4 * 1024 * 1024));
    const stream = bs.Write(new grpc.Metadata(), () => undefined);
    stream.on('error', () => undefined);
    stream.write({ resourceName: `uploads/${randomUUID()}/blobs/${halfGrpc.hash}/${halfGrpc.size}`, writeOffset: 0, data: halfGrpc.data.subarray(0, 1024 * 1024) });
    await waitFor(() => readdirSync(join(data, 'tmp')).filter((f) => f.endsWith('.part')).length === 2, 'two uploads in progress (.part files)');
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    bs.close();

    const second = serve(config, data);
    try {
      const again = await second.urls;
      for (const b of acknowledged) {
        const r = await fetch(`${again.url}/cas/${b.hash}`);
        expect(r.status).toBe(200);
        expect(sha256Hex(new Uint8Array(await r.arrayBuffer()))).toBe(b.hash);
      }
      expect((await fetch(`${again.url}/ac/${key}`)).status).toBe(200);
      expect((await fetch(`${again.url}/cas/${halfHttp.hash}`)).status).toBe(404);
      expect((await fetch(`${again.url}/cas/${halfGrpc.hash}`)).status).toBe(404);
      expect(readdirSync(join(data, 'tmp'))).toEqual([]);
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((resolve) => second.child.once('exit', resolve));
    }
  }, 120_000);
});
