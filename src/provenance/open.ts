// Assembles a ProvenanceService from its configuration: keys (generated on first start), stores,
// policies and the evaluation pool.

import { mkdirSync, readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { BuildSource } from './build-source.js';
import type { ProvenanceConfig } from './config.js';
import { loadKeyRing } from './keys.js';
import { EMPTY_POLICY_SET, parsePolicies, PolicyError, type PolicySet } from './policies.js';
import { EvaluationPool } from './pool.js';
import { ProvenanceService } from './service.js';
import { ObjectStore } from './stores/object-store.js';
import { RepositoryStore } from './stores/repository-store.js';
import type { AttestationStore } from './stores/store.js';
import type { StoreConfig } from './config.js';

export function openStore(c: StoreConfig): AttestationStore {
  switch (c.type) {
    case 'obj':
      mkdirSync(c.directory, { recursive: true });
      return new ObjectStore(c.name, c.directory);
    case 'repo': {
      const { type: _type, instance: _instance, name, ...options } = c;
      return new RepositoryStore(name, options);
    }
  }
}

export function loadPolicies(file: string | undefined): PolicySet {
  if (file === undefined) return EMPTY_POLICY_SET;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new PolicyError(`Cannot read the policy file ${file}: ${(e as Error).message}`);
  }
  return parsePolicies(text, file);
}

/**
 * `serverUrl`: the public address of the server whose builds are read; links to builds
 * (`buildUri`) go to its build pages unless `provenance.buildUriBase` says otherwise.
 */
export function openProvenanceService(config: ProvenanceConfig, builds: BuildSource, serverUrl: () => string, logger?: Logger): ProvenanceService {
  const keys = loadKeyRing(config.keys);
  logger?.info({ keyid: keys.active.keyid, algorithm: keys.active.algorithm, verificationKeys: keys.verification.length }, 'provenance signing key loaded');
  return new ProvenanceService({
    keys,
    stores: config.stores.map(openStore),
    policies: loadPolicies(config.policies),
    builds,
    buildUriBase: config.buildUriBase ?? (() => `${serverUrl().replace(/\/+$/, '')}/builds/`),
    pool: new EvaluationPool(config.pool.size, config.pool.queue),
    ...(logger ? { logger } : {}),
  });
}
