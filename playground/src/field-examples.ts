// An example term for every catalog field, for the field reference ("insert" puts it into the
// editor). Pure, so a test can check that every example parses without a diagnostic.

import { NAMED_FIELDS, type FieldDef } from '../../src/query/catalog.js';

/** Hand-picked examples where a type-based default would say little. */
const F = NAMED_FIELDS;
const SPECIFIC: Readonly<Record<string, string>> = {
  [F.user.name]: `${F.user.name}:ci-*`,
  [F.hostname.name]: `${F.hostname.name}:*.example.com`,
  [F.project.name]: `${F.project.name}:my-app`,
  [F.requested.name]: `${F.requested.name}:*test*`,
  [F.buildToolVersion.name]: `${F.buildToolVersion.name}:8.*`,
  [F.value.name]: `${F.value.name}:"CI Provider=GitHub*"`,
  [F.tag.name]: `${F.tag.name}:CI`,
  [F.buildDuration.name]: `${F.buildDuration.name}>5m`,
  [F.buildStartTime.name]: `${F.buildStartTime.name}>-7d`,
};

/** A plausible value pattern for a string field, from the last part of its name. */
function stringExample(field: FieldDef): string {
  const last = field.name.slice(field.name.lastIndexOf('.') + 1);
  if (field.values && field.values.length > 0) return field.values[0]!;
  if (/version$/i.test(last)) return '1.*';
  if (/^requested/i.test(last)) return '*test*';
  if (/projectname$/i.test(last)) return 'my-*';
  if (/operatingsystem$/i.test(last)) return '*linux*';
  if (/locale$/i.test(last)) return 'en*';
  if (/charset$/i.test(last)) return 'UTF-8';
  if (/ipaddress$/i.test(last)) return '10.*';
  if (/hostname$/i.test(last)) return 'ci-*';
  return '*';
}

export function exampleFor(field: FieldDef): string {
  const specific = SPECIFIC[field.name];
  if (specific) return specific;
  switch (field.type) {
    case 'string':
      return `${field.name}:${stringExample(field)}`;
    case 'keyValue':
      return `${field.name}:name=value*`;
    case 'duration':
      return `${field.name}>1m`;
    case 'timestamp':
      return `${field.name}>-1d`;
    case 'boolean':
      return field.name;
    case 'number':
      return `${field.name}>=4`;
    case 'storageSize':
      return `${field.name}>=2gib`;
  }
}
