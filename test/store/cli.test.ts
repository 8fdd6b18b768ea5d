// The store's commands, run as a user would: demo-data, ingest, search (SQLite data directory).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from '../support/compiled-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'bs-cli-'));
const data = join(dir, 'data');

function cli(args: string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [...CLI, ...args], { input, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('store commands', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('demo-data prints deterministic NDJSON; ingest stores it and reports rejected lines; search finds builds', () => {
    const a = cli(['demo-data', '--builds', '40', '--seed', '3', '--now', '1800000000000']);
    const b = cli(['demo-data', '--builds', '40', '--seed', '3', '--now', '1800000000000']);
    expect(a.status).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    const lines = a.stdout.trim().split('\n');
    expect(lines).toHaveLength(40);
    const file = join(dir, 'builds.ndjson');
    writeFileSync(file, [...lines.slice(0, 20), '{"toolType":"native"}', ...lines.slice(20)].join('\n') + '\n');

    const ingest = cli(['ingest', file, '--data', data]);
    expect(ingest.status).toBe(1);
    expect(ingest.stderr).toContain('line 21: $.toolVersion:');
    expect(ingest.stderr).toMatch(/40 stored .* 0 unchanged, 1 rejected/);

    // From standard input, with per-line results as JSON: everything is already there.
    const again = cli(['ingest', '-', '--data', data, '--json'], lines.join('\n'));
    expect(again.status).toBe(0);
    const results = again.stdout.trim().split('\n').map((l) => JSON.parse(l) as { line: number; status: string });
    expect(results).toHaveLength(40);
    expect(results.every((r) => r.status === 'unchanged')).toBe(true);

    const json = cli(['search', 'buildTool:native', '--json', '--limit', '3', '--data', data]);
    expect(json.status).toBe(0);
    const found = JSON.parse(json.stdout) as { toolType: string; seq: number; attributes: Record<string, unknown> }[];
    expect(found).toHaveLength(3);
    expect(found.every((x) => x.toolType === 'native' && x.attributes['buildTool'] === 'native')).toBe(true);
    // Newest first.
    expect(found.map((x) => x.seq)).toEqual([...found.map((x) => x.seq)].sort((p, q) => q - p));

    const table = cli(['search', '', '--limit', '5', '--data', data]);
    expect(table.status).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+AVAILABLE \(UTC\)\s+TOOL\s+PROJECT\s+OUTCOME\s+DURATION\s+USER$/);
    expect(table.stdout.trim().split('\n')).toHaveLength(6);
  }, 300_000);

  it('search prints diagnostics with a code frame and exits 1 on a bad query', () => {
    const r = cli(['search', 'buildOutcome:faild', '--data', data]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('buildOutcome:faild');
    expect(r.stderr).toContain('^');
    expect(r.stdout).toBe('');
  }, 120_000);

  it('rejects bad options with a clear message', () => {
    const r = cli(['demo-data', '--builds', 'many']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--builds needs an integer, got 'many'");
    const missing = cli(['ingest', join(dir, 'nope.ndjson'), '--data', data]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('cannot read');
  }, 120_000);
});
