// The field reference: every catalog field, searchable, each with an example that inserts into
// the editor. Generated from the catalog, so it never disagrees with the parser.

import { FIELDS, FIELD_TYPE_LABELS, TOOL_TYPES, type FieldDef } from '../../src/query/catalog.js';
import { h } from '../../ui/dom.js';
import { exampleFor } from './field-examples.js';

export interface ReferenceOptions {
  readonly list: HTMLElement;
  readonly search: HTMLInputElement;
  readonly count: HTMLElement;
  readonly onInsert: (example: string) => void;
}

function matches(field: FieldDef, needle: string): boolean {
  if (!needle) return true;
  const hay = `${field.name} ${FIELD_TYPE_LABELS[field.type]} ${field.tool ?? 'generic'} ${field.description} ${(field.values ?? []).join(' ')}`;
  return needle
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => hay.toLowerCase().includes(w));
}

function fieldCard(field: FieldDef, onInsert: (example: string) => void): HTMLElement {
  const example = exampleFor(field);
  const insert = h('button', { type: 'button', class: 'insert', 'aria-label': `Insert example ${example}` }, 'Insert ', h('code', {}, example));
  insert.addEventListener('click', () => onInsert(example));
  const badges = h(
    'span',
    { class: 'badges' },
    h('span', { class: `badge type-${field.type}` }, FIELD_TYPE_LABELS[field.type]),
    field.multi && h('span', { class: 'badge' }, 'multi-valued'),
  );
  return h(
    'li',
    { class: 'field', 'data-field': field.name },
    h('div', { class: 'field-head' }, h('code', { class: 'field-name' }, field.name), badges),
    h('p', { class: 'field-desc' }, field.description.replace(/`/g, '')),
    field.values && h('p', { class: 'field-values small' }, 'Values: ', ...field.values.flatMap((v, i) => [i > 0 ? ', ' : '', h('code', {}, v)]), field.acceptsNull ? ', ' : '', field.acceptsNull ? h('code', {}, 'null') : ''),
    insert,
  );
}

export function setupReference(opts: ReferenceOptions): void {
  const groups: { title: string; fields: readonly FieldDef[] }[] = [
    { title: 'All build tools', fields: FIELDS.filter((f) => f.tool === null) },
    ...TOOL_TYPES.map((t) => ({ title: `${t} builds`, fields: FIELDS.filter((f) => f.tool === t) })),
  ];
  const render = () => {
    const needle = opts.search.value.trim();
    opts.list.replaceChildren();
    let shown = 0;
    for (const g of groups) {
      const fields = g.fields.filter((f) => matches(f, needle));
      if (fields.length === 0) continue;
      shown += fields.length;
      opts.list.append(h('h3', { class: 'field-group' }, g.title), h('ul', { class: 'fields' }, ...fields.map((f) => fieldCard(f, opts.onInsert))));
    }
    opts.count.textContent = needle ? `${shown} of ${FIELDS.length} fields match` : `${FIELDS.length} fields`;
  };
  opts.search.addEventListener('input', render);
  render();
}
