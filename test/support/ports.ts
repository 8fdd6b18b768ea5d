// Free loopback ports, for servers the tests start outside this process (nginx, PostgreSQL, a
// closed port to send to).

import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picked it; nothing listens now). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
