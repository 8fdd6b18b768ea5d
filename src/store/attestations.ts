// The attestations the provenance service made from each build (store migration 0010), for the
// build's page. Written when an attestation has been stored; removed with the build by prune.

import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { BuildAttestation } from './types.js';

/** Records one attestation made from `buildId`; nothing when the build is gone or the URI is known. */
export async function recordAttestation(db: Kysely<Database>, buildId: string, a: BuildAttestation): Promise<void> {
  await db
    .insertInto('build_attestations')
    .columns(['attestation_uri', 'seq', 'build_id', 'package_url', 'digest', 'predicate_type', 'store', 'published_at'])
    .expression((eb) =>
      eb
        .selectFrom('builds')
        .select([
          eb.val(a.attestationUri).as('attestation_uri'),
          'seq',
          'id',
          eb.val(a.packageUrl).as('package_url'),
          eb.val(a.digest).as('digest'),
          eb.val(a.predicateType).as('predicate_type'),
          eb.val(a.store).as('store'),
          eb.val(a.publishedAt).as('published_at'),
        ])
        .where('id', '=', buildId)
        .where('seq', 'is not', null),
    )
    .onConflict((oc) => oc.column('attestation_uri').doNothing())
    .execute();
}

/** The attestations made from `buildId`, oldest first. */
export async function attestationsOf(db: Kysely<Database>, buildId: string): Promise<BuildAttestation[]> {
  const rows = await db
    .selectFrom('build_attestations')
    .select(['attestation_uri', 'package_url', 'digest', 'predicate_type', 'store', 'published_at'])
    .where('build_id', '=', buildId)
    .orderBy('published_at')
    .orderBy('attestation_uri')
    .execute();
  return rows.map((r) => ({
    attestationUri: r.attestation_uri,
    packageUrl: r.package_url,
    digest: r.digest,
    predicateType: r.predicate_type,
    store: r.store,
    publishedAt: Number(r.published_at),
  }));
}
