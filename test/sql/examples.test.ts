// Every example of search-semantics.md, parsed with parseQuery, against a small fixed data set
// with known answers: on the reference evaluator, SQLite and PostgreSQL.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/query/index.js';
import type { CheckedExpr } from '../../src/query/checked.js';
import { evaluate } from '../../src/query/evaluate.js';
import { rebuildTrigramTables } from '../../src/sql/index.js';
import { pgAvailable } from '../support/postgres.js';
import { insertBuilds, openSearchDb, searchIds, type SearchDb, type TestBuild } from './support/search-db.js';

const NOW = Date.UTC(2024, 2, 10, 12);
const t = (iso: string): number => Date.parse(iso);
const GIB = 1024 ** 3;

const BUILDS: readonly TestBuild[] = [
  {
    id: 'b1',
    toolType: 'native',
    attributes: {
      buildTool: 'native', project: 'my-app', tag: ['CI'], user: 'alice', buildOutcome: 'failed',
      buildStartTime: t('2024-03-08T10:00:00Z'), buildDuration: 120_000, requested: ['clean', 'integrationTest'],
      value: [{ name: 'CI Provider', value: 'GitHub Actions' }],
      'native.environment.jvmMaxMemoryHeapSize': 4 * GIB, 'native.buildCache.remote.enabled': true,
      'native.configurationCache.outcome': 'hit',
    },
  },
  {
    id: 'b2',
    toolType: 'native',
    attributes: {
      buildTool: 'native', project: 'My-App', tag: ['nightly'], user: 'bot', buildOutcome: 'succeeded',
      buildStartTime: t('2024-03-01T05:00:00Z'), buildDuration: 330_000, requested: ['build'],
      value: [{ name: 'ci provider', value: 'Jenkins' }],
      'native.environment.jvmMaxMemoryHeapSize': GIB, 'native.buildCache.remote.enabled': false,
    },
  },
  {
    id: 'b3',
    toolType: 'jvmbuild',
    attributes: {
      buildTool: 'jvmbuild', project: 'my-app', tag: ['ci', 'nightly'], user: 'Bob', buildOutcome: 'failed',
      buildStartTime: t('2024-02-20T10:00:00Z'), buildDuration: 30_000, requested: ['test'],
      value: [{ name: 'CI Provider', value: 'github' }], 'jvmbuild.buildOptions.offlineModeEnabled': true,
    },
  },
  {
    id: 'b4',
    toolType: 'jsbuild',
    attributes: {
      buildTool: 'jsbuild', project: 'other', tag: ['CI'], user: 'carol', buildOutcome: 'failed',
      buildStartTime: t('2024-03-09T23:59:59Z'), buildDuration: 60_000, requested: ['run test:unit'],
    },
  },
  {
    id: 'b5',
    toolType: 'pybuild',
    attributes: { buildTool: 'pybuild', buildOutcome: 'succeeded', buildStartTime: t('2024-03-01T23:00:00Z'), buildDuration: 360_000 },
  },
  {
    id: 'b6',
    toolType: 'native',
    attributes: {
      buildTool: 'native', project: 'my-app', tag: ['CI'], user: 'bot', buildOutcome: 'succeeded',
      buildStartTime: t('2024-03-02T00:00:00Z'), buildDuration: 10_000,
      'native.environment.jvmMaxMemoryHeapSize': 2 * GIB, 'native.configurationCache.outcome': 'miss',
    },
  },
  {
    id: 'b7',
    toolType: 'jvmbuild',
    attributes: { buildTool: 'jvmbuild', buildStartTime: t('2024-03-01T06:00:00Z'), 'jvmbuild.buildOptions.offlineModeEnabled': false },
  },
];

const ALL = BUILDS.map((b) => b.id);
const except = (...ids: string[]): string[] => ALL.filter((id) => !ids.includes(id));

/** The examples of search-semantics.md, plus the equivalences it states. */
const EXAMPLES: readonly (readonly [string, readonly string[]])[] = [
  ['buildOutcome:failed buildStartTime>-7d', ['b1', 'b4']],
  ['project:my-app (tag:CI or tag:nightly) -user:bot', ['b1', 'b3']],
  ['value:"CI Provider=GitHub*"', ['b1', 'b3']],
  ['requested:*test*', ['b1', 'b3', 'b4']],
  ['buildDuration:[1m to 5m30s]', ['b1', 'b2', 'b4']],
  ['buildStartTime:2024-03-01', ['b2', 'b5', 'b7']],
  ['buildStartTime:[2024-03-01T08:00+02:00 to 2024-03-02]', ['b5', 'b6', 'b7']],
  ['native.environment.jvmMaxMemoryHeapSize>=2gib', ['b1', 'b6']],
  ['jvmbuild.buildOptions.offlineModeEnabled', ['b3']],
  // `!` forms and `:null` on a tool-specific field are terms of that tool: native builds only.
  ['!native.buildCache.remote.enabled', ['b2', 'b6']],
  ['!native.configurationCache.outcome:*', ['b2']],
  // Equivalences and edges the semantics file states.
  ['native.configurationCache.outcome:null', ['b2']],
  ['-native.configurationCache.outcome:*', except('b1', 'b6')],
  ['-native.buildCache.remote.enabled', except('b1')],
  ['buildTool:native -native.buildCache.remote.enabled', ['b2', 'b6']],
  ['-!native.configurationCache.outcome:*', except('b2')],
  ['!(native.buildCache.remote.enabled)', except('b1')],
  ['', ALL],
  ['-user:bob', except('b3')],
  ['user:BOB', ['b3']],
  ['-(user:bot or tag:ci)', ['b5', 'b7']],
  ['-user:bot -tag:ci', ['b5', 'b7']],
  ['not not user:bot', ['b2', 'b6']],
  ['buildTool:native -native.environment.jvmMaxMemoryHeapSize>=2gib', ['b2']],
  ['-native.environment.jvmMaxMemoryHeapSize>=2gib', except('b1', 'b6')],
  ['value:"ci provider"', ['b1', 'b2', 'b3']],
  ['user:*', except('b5', 'b7')],
  ['!user:*', ['b5', 'b7']],
  ['tag:c*', ['b1', 'b3', 'b4', 'b6']],
  ['requested:*TEST', ['b1', 'b3']],
  ['buildStartTime:[2024-03-01 to 2024-03-01]', ['b2', 'b5', 'b7']],
  ['buildDuration>=6m or buildDuration<15s', ['b5', 'b6']],
];

function parse(text: string): CheckedExpr {
  const r = parseQuery(text, { now: NOW });
  if (!r.ok || !r.expr) throw new Error(`${text}: ${r.diagnostics.map((d) => d.message).join('; ')}`);
  return r.expr;
}

describe('the reference evaluator', () => {
  it.each(EXAMPLES)('%s', (text, ids) => {
    const q = parse(text);
    expect(BUILDS.filter((b) => evaluate(q, b)).map((b) => b.id)).toEqual([...ids].sort());
  });
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(dialect === 'postgres' && !pgAvailable())(`${dialect}`, () => {
    let db: SearchDb;
    beforeAll(async () => {
      db = await openSearchDb(dialect);
      await insertBuilds(db.handle, BUILDS);
    });
    afterAll(async () => db?.close());

    it.each(EXAMPLES)('%s', async (text, ids) => {
      expect(await searchIds(db.handle, parse(text))).toEqual([...ids].sort());
    });
  });
}

describe('SQLite after VACUUM and rebuildTrigramTables', () => {
  let db: SearchDb;
  beforeAll(async () => {
    db = await openSearchDb('sqlite');
    await insertBuilds(db.handle, BUILDS);
    db.handle.sqlite!.exec('VACUUM');
    rebuildTrigramTables(db.handle);
  });
  afterAll(async () => db?.close());

  it.each(EXAMPLES.filter(([q]) => q.includes('*')))('%s', async (text, ids) => {
    expect(await searchIds(db.handle, parse(text))).toEqual([...ids].sort());
  });
  it('infix searches on every trigram-indexed column', async () => {
    expect(await searchIds(db.handle, parse('user:*aro*'))).toEqual(['b4']);
    expect(await searchIds(db.handle, parse('value:*rovid*=*ithu*'))).toEqual(['b1', 'b3']);
    expect(await searchIds(db.handle, parse('tag:*igh*'))).toEqual(['b2', 'b3']);
  });
});
