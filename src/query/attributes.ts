// What a build's searchable attributes look like: the values the reference evaluator matches
// queries against and the store derives from events. Defined here, at the bottom of the layers,
// so that the query package needs nothing from the store.

/** A derived attribute value: string, number (durations/timestamps in ms, sizes in bytes), boolean. */
export type AttributeValue = string | number | boolean;

/** The searchable attributes of a build, keyed by catalog field name. Unknown values are absent. */
export interface BuildAttributes {
  readonly [fieldName: string]: AttributeValue | readonly AttributeValue[] | readonly { readonly name: string; readonly value: string }[] | undefined;
}
