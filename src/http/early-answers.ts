// Answers given before a request is read to its end, made readable by every client.
//
// 1. A request refused before its body is read (413 on Content-Length, 401, 400 on the query, 404)
//    would otherwise be answered while the client is still sending: Node then closes the
//    connection (always for `Connection: close` clients) and the client's next write fails with a
//    broken pipe instead of showing the answer. So the rest of the body is read and discarded
//    first, up to DRAIN_MAX_BYTES and DRAIN_MAX_MS; a body beyond that is not worth reading and
//    the connection is closed as before (the answer says `Connection: close`).
// 2. Requests Node's parser refuses before fastify sees them (a malformed request line, a request
//    target or headers over Node's 16 KB header limit) are answered with problem documents
//    instead of fastify's plain JSON.

import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { problem, type ProblemKind } from './problem.js';

/** Unread body the server reads and discards before answering early (beyond it: close). */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
/** Longest time spent reading an unread body before answering early. */
export const DRAIN_MAX_MS = 30_000;

/** Reads and discards what is left of a request body; false when it is over the bounds. */
export function drainBody(req: IncomingMessage, maxBytes = DRAIN_MAX_BYTES, maxMs = DRAIN_MAX_MS): Promise<boolean> {
  if (req.complete || req.readableEnded || req.destroyed) return Promise.resolve(true);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(false);
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (ok: boolean): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onClose);
      if (!ok) req.pause();
      resolve(ok);
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > maxBytes) finish(false);
    };
    const onEnd = (): void => finish(true);
    const onClose = (): void => finish(req.complete);
    const timer = setTimeout(() => finish(false), maxMs);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.once('error', onClose);
    req.resume();
  });
}

/** onSend hook: before an answer goes out, read the unread rest of the request body. */
export async function drainBeforeAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const req = request.raw;
  if (req.complete || req.readableEnded || req.destroyed) return payload;
  if (!(await drainBody(req))) reply.header('connection', 'close');
  return payload;
}

/** The first line of the bytes Node received, when it has one. */
function requestLineLength(raw: unknown): number {
  if (!Buffer.isBuffer(raw)) return 0;
  const end = raw.indexOf('\r\n');
  return end < 0 ? raw.length : end;
}

/** fastify's clientErrorHandler: errors of Node's HTTP parser, answered as problem documents. */
export function answerClientError(err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status: number;
  let kind: ProblemKind;
  let detail: string;
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      status = 408;
      kind = 'bad-request';
      detail = 'The request was not received in time';
      break;
    case 'HPE_HEADER_OVERFLOW':
      // Node's limit covers the request line and the headers together; say which one was long.
      if (requestLineLength(err.rawPacket) >= 8 * 1024) {
        status = 414;
        kind = 'uri-too-long';
        detail = 'The request target is too long (the request line and headers may hold 16 KB); send long queries in several requests';
      } else {
        status = 431;
        kind = 'header-fields-too-large';
        detail = 'The request headers are too large (at most 16 KB together with the request line)';
      }
      break;
    default:
      status = 400;
      kind = 'malformed-request';
      detail = `The request is not valid HTTP/1.1 (${err.code ?? 'parse error'})`;
  }
  if (socket.writable) {
    const body = JSON.stringify(problem(status, detail, {}, kind));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
