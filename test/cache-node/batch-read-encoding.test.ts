// The BatchReadBlobs answer is written field by field (grpc-protocol.ts, for speed); for random
// answers it decodes, with the protocol's own message type, to what protobufjs's encoding of the
// same answer decodes to: the same digests, data and statuses, in order (proto3: a zero size and an
// OK status read as their defaults either way).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serviceDefinitions } from '../../src/cache-node/grpc-protocol.js';
import { messageType, REAPI } from '../../src/cache-node/proto.js';

const RESPONSE = `${REAPI}.BatchReadBlobsResponse`;

const entry = fc.record({
  hash: fc.stringMatching(/^[0-9a-f]{64}$/),
  size: fc.oneof(fc.constant(0), fc.nat(), fc.integer({ min: 2 ** 32, max: Number.MAX_SAFE_INTEGER })),
  data: fc.option(fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), { nil: undefined }),
  code: fc.constantFrom(0, 5, 13),
  message: fc.oneof(fc.constant(''), fc.string({ maxLength: 40 })),
});

describe('BatchReadBlobs answers', () => {
  it('decode to what protobufjs encodes for the same answer', () => {
    const serialize = serviceDefinitions().cas['BatchReadBlobs']!.responseSerialize;
    const type = messageType(RESPONSE);
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 12 }), (responses) => {
        const mine = type.toObject(type.decode(serialize({ responses })), { longs: Number, bytes: Buffer, defaults: true });
        const reference = type.toObject(
          type.decode(
            type
              .encode(
                type.fromObject({
                  responses: responses.map((e) => ({ digest: { hash: e.hash, sizeBytes: e.size }, ...(e.data !== undefined ? { data: e.data } : {}), status: { code: e.code, message: e.message } })),
                }),
              )
              .finish(),
          ),
          { longs: Number, bytes: Buffer, defaults: true },
        );
        expect(mine).toEqual(reference);
      }),
      { numRuns: 300 },
    );
  });
});
