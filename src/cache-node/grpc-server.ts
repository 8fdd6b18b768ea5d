// The Remote Execution API's cache over gRPC on a port of its own (`--grpc-port`): capabilities,
// the action cache, the CAS and ByteStream, on the node's store (grpc-cache.ts,
// grpc-bytestream.ts). Plain-text HTTP/2 (grpc://); put a TLS proxy in front for grpcs://.

import * as grpc from '@grpc/grpc-js';
import { cacheHandlers } from './grpc-cache.js';
import { byteStreamHandlers } from './grpc-bytestream.js';
import { serviceDefinitions } from './grpc-protocol.js';
import type { NodeState } from './state.js';

export interface GrpcEndpoint {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

export async function startGrpc(node: NodeState, port: number, host: string): Promise<GrpcEndpoint> {
  const server = new grpc.Server({
    // A BatchUpdateBlobs request is one message held in memory: the 4 MiB default, stated.
    'grpc.max_receive_message_length': 4 * 1024 * 1024,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
    // Channelz (grpc-js's introspection service, which this node does not serve) counts every
    // call and message with timestamps: per-call work a batch of small blobs pays for nothing.
    'grpc.enable_channelz': 0,
  });
  const defs = serviceDefinitions();
  const cache = cacheHandlers(node);
  const byteStream = byteStreamHandlers(node);
  server.addService(defs.capabilities, cache.capabilities);
  server.addService(defs.actionCache, cache.actionCache);
  server.addService(defs.cas, cache.cas);
  server.addService(defs.byteStream, byteStream.handlers);
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  const url = `grpc://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  node.logger.info({ url }, 'cache node gRPC (Remote Execution API cache) listening');
  return {
    port: bound,
    url,
    async close() {
      await new Promise<void>((resolve) => {
        // Calls in flight get a short grace, then are cut (a build client retries elsewhere).
        const force = setTimeout(() => server.forceShutdown(), 2000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      await byteStream.close();
    },
  };
}
