// The two states of a build that a reader asking for it by ID must tell apart from "no such build":
// still being stored (retry later) and deleted by retention or prune (do not retry).

import { DomainError } from './domain.js';

/** The build's events are still arriving: 503 with Retry-After, as the export API answers too. */
export class BuildNotReadyError extends DomainError {
  readonly kind = 'not-ready';
  constructor(id: string, retryAfterSeconds: number) {
    super(`Build ${id} is still being stored; retry later`, { retryAfterSeconds });
  }
}

/** The build existed and was deleted: 404 with its own problem type, so clients stop asking. */
export class BuildDeletedError extends DomainError {
  readonly kind = 'build-deleted';
  constructor(id: string, deletedAt: number) {
    super(`Build ${JSON.stringify(id)} was deleted at ${new Date(deletedAt).toISOString()} (retention)`, { extensions: { title: 'Build deleted' } });
  }
}
