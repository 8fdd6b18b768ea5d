// What a section of the server's configuration file is: one descriptor (name, schema, wording,
// faults, parse). src/config/sections.ts lists them; src/config.ts derives from that list the
// whole file's schema, the checks of a file, the typed configuration and every face's settings,
// so a new section is one descriptor and nothing else.
//
// Two kinds, as the server treats them differently:
//   own   the server's own sections (server, bes, database, auth, limits): checked together, with
//         one compiled schema, whenever a configuration is parsed, and resolved into ServerConfig.
//   face  a face's section (export, provenance, ...): handed on as written; checked by the face's
//         own validator when a file is read, and parsed into the face's settings by `openServer`
//         (faceSettings) before the database is opened.

import type { Fault, Validator, Wording } from './schema-check.js';

/** What a section's rules and parse function may read of other sections. */
export interface SectionContext {
  readonly database: { readonly data?: string | undefined; readonly url?: string | undefined };
}

/** A section's JSON Schema (an object schema with its settings' `properties`). */
export interface SectionSchema {
  readonly type: 'object';
  readonly description: string;
  readonly properties: object;
}

/**
 * One of the server's own sections. `C` is the section as the schema leaves it (defaults filled
 * in), `R` the resolved section of ServerConfig. Methods, not function properties: a list of
 * sections of different types is then one list of `AnyOwnSection`.
 */
export interface OwnSection<N extends string, C, R> {
  readonly kind: 'own';
  readonly name: N;
  readonly schema: SectionSchema;
  /** Only `pattern` wording: the own sections are checked as one schema, which dispatches by section. */
  readonly wording?: Pick<Wording, 'pattern'>;
  /** What the schema cannot say, at paths relative to the section. */
  faults?(section: C): Fault[];
  parse(section: C): R;
}

/** A face's section; `C` is the checked section, `R` the face's typed settings. */
export interface FaceSection<N extends string, C, R> {
  readonly kind: 'face';
  readonly name: N;
  readonly schema: SectionSchema;
  /** The section's compiled schema, the one its face's parse function uses too. */
  readonly validate: Validator;
  readonly wording?: Wording;
  /** Names under which an entry written without a value is kept (the operator's own names). */
  readonly keepNulls?: ReadonlySet<string>;
  /** What the schema cannot say, at paths relative to the section (run on a file the schemas accept). */
  faults?(section: C, context: SectionContext): Fault[];
  /** The face's settings; throws a ConfigError naming each fault (absent section: `undefined`). */
  parse(section: unknown, context: SectionContext): R;
}

export type AnyOwnSection = OwnSection<string, unknown, unknown>;
export type AnyFaceSection = FaceSection<string, unknown, unknown>;
export type AnySection = AnyOwnSection | AnyFaceSection;

/** Keeps a descriptor's literal name and types (for the types derived from the list). */
export const ownSection = <N extends string, C, R>(d: Omit<OwnSection<N, C, R>, 'kind'>): OwnSection<N, C, R> => ({ kind: 'own', ...d });
export const faceSection = <N extends string, C, R>(d: Omit<FaceSection<N, C, R>, 'kind'>): FaceSection<N, C, R> => ({ kind: 'face', ...d });
