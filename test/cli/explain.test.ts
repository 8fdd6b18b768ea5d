// `buildscope explain`, run as a user would: the checked AST, the SQL of both dialects with its
// parameters, the SQLite plan of a data directory, and diagnostics with a caret for a bad query.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStoreAt } from '../../src/store/open.js';
import { CLI } from '../support/compiled-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'bs-explain-'));

function cli(args: string[], options: { cwd?: string } = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [...CLI, ...args], { encoding: 'utf8', timeout: 120_000, ...options });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('explain command', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the checked AST, parameterised SQL for SQLite and PostgreSQL, and the SQLite plan', async () => {
    // explain only reads: the plan needs a database that exists (an empty one is enough).
    await (await openStoreAt({ data: join(dir, 'data') })).close();
    const r = cli(['explain', `project:app* user:"o'brien; drop table builds" tag:ci`, '--data', join(dir, 'data')]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^query: /);
    expect(r.stdout).toContain('project [String] matches "app*"');
    expect(r.stdout).toContain('SQL (sqlite):');
    expect(r.stdout).toContain('SQL (postgres):');
    // User text travels as parameters, never inside the SQL.
    const sqlLines = r.stdout.split('\n').filter((l) => /^\s+select /.test(l));
    expect(sqlLines).toHaveLength(2);
    for (const l of sqlLines) expect(l).not.toContain('brien');
    expect(r.stdout).toContain(`"o'brien; drop table builds"`);
    expect(r.stdout).toMatch(/Plan \(sqlite, .*buildscope\.db\):\n\s+SEARCH builds USING INDEX/);
  });

  it('skips the database with --no-plan', () => {
    const r = cli(['explain', 'buildOutcome:failed', '--no-plan', '--data', join(dir, 'never')]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('SQL (sqlite):');
    expect(r.stdout).not.toContain('Plan (');
  });

  it('prints the AST and the SQL without a store, says that the plan needs one, and exits 0; a named store that is not there is an error', () => {
    const r = cli(['explain', 'buildOutcome:failed'], { cwd: dir });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('SQL (postgres):');
    expect(r.stdout).toMatch(/Plan: needs a store \(--data DIR or --db URL\)/);
    expect(existsSync(join(dir, '.buildscope')), 'a read-only command creates nothing').toBe(false);
    const named = cli(['explain', 'buildOutcome:failed', '--data', join(dir, 'never')]);
    expect(named.status).toBe(2);
    expect(named.stderr).toMatch(/^buildscope explain: no data directory/);
  });

  it('prints each diagnostic with a caret under the fault and exits 1', () => {
    const r = cli(['explain', 'buildOutcom:failed buildDuration>fast', '--no-plan']);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("did you mean 'buildOutcome'");
    expect(r.stdout).toMatch(/1 \| buildOutcom:failed buildDuration>fast\n\s+\| \^{11}/);
    expect(r.stdout).toContain('2 problems found');
    expect(r.stdout).not.toContain('SQL (');
  });
});
