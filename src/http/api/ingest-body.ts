// The NDJSON body of POST /api/builds as an async iterable of chunks, refusing more than a limit.

import { TooLargeError } from '../../errors/domain.js';

/** Answered 413 by the error handler; the lines before the limit are stored. */
export class IngestTooLargeError extends TooLargeError {
  constructor(limit: number) {
    super(`The request body exceeds ${limit} bytes; send the builds in several requests`);
  }
}

export async function* countingLines(body: NodeJS.ReadableStream, limit: number): AsyncIterable<Uint8Array> {
  let total = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += bytes.length;
    if (total > limit) throw new IngestTooLargeError(limit);
    yield bytes;
  }
}
