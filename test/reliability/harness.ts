// A server process of its own (server-process.ts) and clients that stop reading, for the cost
// suites: memory is measured in the server's process after a full garbage collection.

import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MemoryMessage, ReadyMessage } from './server-process.js';

export interface ServerProcess extends ReadyMessage {
  readonly port: number;
  memory(): Promise<MemoryMessage>;
  close(): Promise<void>;
}

/** Starts server-process.ts over SQLite (a temp dir) or the PostgreSQL database `url`. */
export async function startServerProcess(options: { url?: string; events?: number; logins?: number; builds?: number }): Promise<ServerProcess> {
  const dir = options.url === undefined ? mkdtempSync(join(tmpdir(), 'bs-reliability-')) : undefined;
  const child: ChildProcess = fork(new URL('./server-process.ts', import.meta.url).pathname, [], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env: { ...process.env, ...(dir ? { BS_DATA: dir } : { BS_URL: options.url! }), BS_EVENTS: String(options.events ?? 100_005), BS_LOGINS: String(options.logins ?? 0), BS_BUILDS: String(options.builds ?? 0) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<ReadyMessage>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the server process exited with ${code}`)));
    child.on('message', (m: { ready?: ReadyMessage }) => {
      if (m.ready) resolve(m.ready);
    });
  });
  child.removeAllListeners('exit');
  return {
    ...ready,
    port: Number(new URL(ready.url).port),
    memory: () =>
      new Promise((resolve) => {
        const on = (m: { memory?: MemoryMessage }): void => {
          if (!m.memory) return;
          child.off('message', on);
          resolve(m.memory);
        };
        child.on('message', on);
        child.send('memory');
      }),
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => {
          if (dir) rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.send('close');
      }),
  };
}

/**
 * A client that sends a GET, waits for the first bytes of the answer (the headers: the server has
 * started the response) and then stops reading: the socket is paused, so the server's writes
 * fill the kernel's buffers and then its own.
 */
export function slowReader(port: number, path: string, headers: Record<string, string>, options: { awaitFirstBytes?: boolean } = {}): Promise<{ socket: Socket; first: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const lines = [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    socket.write(lines.join('\r\n') + '\r\n\r\n');
    if (options.awaitFirstBytes === false) {
      // A long-poll answers only when there is something: the request is out, the reader stops.
      socket.pause();
      socket.once('connect', () => resolve({ socket, first: '' }));
      socket.once('error', reject);
      return;
    }
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve({ socket, first: chunk.toString('latin1') });
    });
    socket.once('error', reject);
  });
}

export const MiB = 1024 * 1024;

/** Memory a test charges to the server: the JS heap and the buffers outside it. */
export function charged(m: MemoryMessage): number {
  return m.heapUsed + m.external;
}
