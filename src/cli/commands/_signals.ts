// How a long-running command (serve, cache-node serve, provenance serve) stops on SIGINT/SIGTERM:
// it closes what it runs and exits 0; a second signal exits at once; and a shutdown that has not
// finished after its stop timeout exits 1, so that a request that never ends cannot hold it.

import type { Logger } from '../../log.js';

/** What a command runs: a server of one kind or another. */
export interface Closable {
  close(): Promise<void>;
}

/**
 * Installed before the server starts, so that a signal arriving during start-up (or right after
 * the ready line) is honoured once `attach` hands over what to close.
 */
export function closeOnSignals(logger: Logger, stopTimeoutSeconds: number): { attach(running: Closable): void; stop(reason: string): void } {
  let running: Closable | undefined;
  let requested: string | undefined;
  const close = () => {
    logger.info({ signal: requested }, 'shutting down');
    // What still runs then (a request whose body never ends, say) is cut off: a shutdown ends.
    setTimeout(() => {
      logger.error({ stopTimeoutSeconds }, `the shutdown did not finish in ${stopTimeoutSeconds} s; exiting`);
      process.exit(1);
    }, stopTimeoutSeconds * 1000).unref();
    running!.close().then(
      () => process.exit(0),
      (e: unknown) => {
        logger.error({ err: e }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: string) => {
    if (requested !== undefined) process.exit(1);
    requested = signal;
    if (running !== undefined) close();
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  return {
    attach(r) {
      running = r;
      if (requested !== undefined) close();
    },
    /** Closes like a signal would, but never exits at once (several requests are one request). */
    stop(reason) {
      if (requested !== undefined) return;
      requested = reason;
      if (running !== undefined) close();
    },
  };
}
