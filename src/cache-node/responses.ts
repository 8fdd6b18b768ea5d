// Small pieces of HTTP every part of the cache node answers with: problem documents, the client's
// address, and reading a request body to its end.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { problem } from '../errors/problem.js';

export function sendProblem(res: ServerResponse, status: number, detail: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(problem(status, detail));
  res.writeHead(status, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Whom failed password checks are counted against: the peer address of the connection. */
export function clientOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/** Reads and discards the rest of a request body; false when the client went away first. */
export function readToEnd(req: IncomingMessage): Promise<boolean> {
  if (req.complete) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onError);
      resolve(ok);
    };
    const onEnd = () => done(true);
    const onClose = () => done(req.complete);
    const onError = () => done(false);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.on('error', onError);
    req.resume();
  });
}
