// Shared pieces of the Bazel protocol tests: blobs with their digests, and serialized
// ActionResults and Trees built with the node's own .proto files.

import { createHash, randomBytes } from 'node:crypto';
import { messageType, REAPI } from '../../src/cache-node/proto.js';

export interface Blob {
  readonly hash: string;
  readonly size: number;
  readonly data: Buffer;
}

export function blob(data: Buffer | string = randomBytes(100)): Blob {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  return { hash: createHash('sha256').update(buf).digest('hex'), size: buf.length, data: buf };
}

const digest = (b: Blob) => ({ hash: b.hash, sizeBytes: b.size });

export function actionResult(parts: { files?: Blob[]; stdout?: Blob; trees?: Blob[] }): Buffer {
  const type = messageType(`${REAPI}.ActionResult`);
  const message = type.create({
    outputFiles: (parts.files ?? []).map((f, i) => ({ path: `out/file${i}`, digest: digest(f) })),
    outputDirectories: (parts.trees ?? []).map((t, i) => ({ path: `out/dir${i}`, treeDigest: digest(t) })),
    exitCode: 0,
    ...(parts.stdout ? { stdoutDigest: digest(parts.stdout) } : {}),
  });
  return Buffer.from(type.encode(message).finish());
}

/** A serialized Tree whose root directory holds `files`. */
export function tree(files: Blob[]): Blob {
  const type = messageType(`${REAPI}.Tree`);
  return blob(Buffer.from(type.encode(type.create({ root: { files: files.map((f, i) => ({ name: `f${i}`, digest: digest(f) })) } })).finish()));
}

/** An action key: any SHA-256 (the node cannot check it against the Action). */
export function actionKey(): string {
  return createHash('sha256').update(randomBytes(16)).digest('hex');
}

/** The value of one sample of a Prometheus text exposition, 0 when absent. */
export function metric(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (want.length === 0 && line.startsWith(`${name} `)) return Number(line.slice(name.length + 1).trim());
    if (!line.startsWith(`${name}{`)) continue;
    const inner = line.slice(name.length + 1, line.indexOf('}'));
    const have = inner.split(',');
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(line.slice(line.indexOf('}') + 1).trim());
  }
  return 0;
}
