// Every section of the server's configuration file, in the file schema's order: the one list
// src/config.ts derives everything else from (the whole file's schema, the checks of a file, the
// typed ServerConfig and every face's settings). A new section is one descriptor here; its
// settings are one JSON Schema in its own module (section.ts says what a descriptor holds).

import { DEFAULT_DATA_DIR } from '../db/database.js';
import { exportSchema, exportValidator, exportWording, parseExportOptions } from '../export/options.js';
import { parseProvenanceConfig, PROVENANCE_KEEP_NULLS, provenanceFaults, provenanceSchema, provenanceValidator, provenanceWording } from '../provenance/config.js';
import { parseRetentionConfig, retentionFaults, retentionSchema, retentionValidator, type RetentionConfig } from '../retention/config.js';
import { cacheNodesSchema, cacheNodesValidator, parseCacheNodesSection } from '../cache-registry/config.js';
import { parsePlaygroundSection, playgroundSchema, playgroundValidator, playgroundWording } from './playground.js';
import { authSection } from './auth.js';
import { besSection } from './bes.js';
import { databaseSection } from './database.js';
import { limitsSection } from './limits.js';
import { serverSection } from './server.js';
import { faceSection, type AnyFaceSection, type AnyOwnSection, type FaceSection, type OwnSection } from './section.js';

const exportSection = faceSection({
  name: 'export',
  schema: exportSchema,
  validate: exportValidator,
  wording: exportWording,
  parse: (s) => parseExportOptions(s),
});

const provenanceSection = faceSection({
  name: 'provenance',
  schema: provenanceSchema,
  validate: provenanceValidator,
  wording: provenanceWording,
  keepNulls: PROVENANCE_KEEP_NULLS,
  faults: (s: Parameters<typeof provenanceFaults>[0]) => provenanceFaults(s),
  // Key directories default to a place in the data directory.
  parse: (s, { database }) => parseProvenanceConfig(s, database.data ?? DEFAULT_DATA_DIR),
});

const cacheNodesSection = faceSection({
  name: 'cacheNodes',
  schema: cacheNodesSchema,
  validate: cacheNodesValidator,
  parse: (s) => parseCacheNodesSection(s),
});

const playgroundSection = faceSection({
  name: 'playground',
  schema: playgroundSchema,
  validate: playgroundValidator,
  wording: playgroundWording,
  parse: (s) => parsePlaygroundSection(s),
});

const retentionSection = faceSection({
  name: 'retention',
  schema: retentionSchema,
  validate: retentionValidator,
  // Watching the disk needs the embedded database's data directory.
  faults: (s: RetentionConfig, { database }) => retentionFaults(s, database),
  parse: (s, { database }) => parseRetentionConfig(s, database),
});

/** The sections, in the order of the file's schema (schema/server-config.schema.json). */
export const SECTIONS = [serverSection, besSection, databaseSection, authSection, limitsSection, exportSection, provenanceSection, cacheNodesSection, playgroundSection, retentionSection] as const;

type Section = (typeof SECTIONS)[number];
/** The server's own sections (checked and resolved whenever a configuration is parsed). */
export type OwnSectionOf = Extract<Section, { readonly kind: 'own' }>;
/** The faces' sections (handed on as written, parsed by `faceSettings`). */
export type FaceSectionOf = Extract<Section, { readonly kind: 'face' }>;

/** A section as its schema leaves it (defaults filled in). */
export type CheckedOf<S> = S extends OwnSection<string, infer C, unknown> ? C : S extends FaceSection<string, infer C, unknown> ? C : never;

export const OWN_SECTIONS: readonly AnyOwnSection[] = SECTIONS.filter((s): s is OwnSectionOf => s.kind === 'own');
export const FACE_SECTIONS: readonly AnyFaceSection[] = SECTIONS.filter((s): s is FaceSectionOf => s.kind === 'face');
