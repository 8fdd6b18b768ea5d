// `buildscope prune` run as an operator's cron job would: a dry run lists what would go and changes
// nothing; the real run deletes exactly those builds; mistakes get one line without a stack.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from '../support/compiled-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'bs-prune-'));
const data = join(dir, 'data');

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [...CLI, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Each step is a command of its own (a Node process): on a loaded machine several seconds each.
describe('buildscope prune', { timeout: 120_000 }, () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--dry-run lists the builds older than the age and changes nothing; then prune deletes exactly those', () => {
    // 40 demo builds starting over the 30 days before now.
    const demo = cli(['demo-data', '--builds', '40', '--seed', '5']);
    expect(demo.status).toBe(0);
    const file = join(dir, 'builds.ndjson');
    writeFileSync(file, demo.stdout);
    expect(cli(['ingest', file, '--data', data]).status).toBe(0);
    const starts = demo.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { buildId: string; events: { timestamp: number; type: { eventType: string } }[] })
      .map((b) => ({ id: b.buildId, start: b.events.find((e) => e.type.eventType === 'BuildStarted')!.timestamp }));
    const cutoff = Date.now() - 15 * 86_400_000;
    // Builds within a minute of the cutoff could go either way (the command reads the clock later).
    const old = starts.filter((b) => b.start < cutoff - 60_000).map((b) => b.id);
    const young = starts.filter((b) => b.start > cutoff + 60_000).map((b) => b.id);
    expect(old.length).toBeGreaterThan(5);

    const db = readFileSync(join(data, 'buildscope.db'));
    const dry = cli(['prune', '--older-than', '15d', '--dry-run', '--data', data]);
    expect(dry.status).toBe(0);
    const listed = dry.stdout.trim().split('\n');
    for (const id of old) expect(listed).toContain(id);
    for (const id of young) expect(listed).not.toContain(id);
    expect(dry.stderr).toMatch(new RegExp(`^${listed.length} builds started before .* would be deleted .*nothing deleted`, 'm'));
    expect(readFileSync(join(data, 'buildscope.db')).equals(db)).toBe(true);

    const run = cli(['prune', '--older-than', '15d', '--data', data]);
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`^${listed.length} builds deleted in`, 'm'));
    const left = cli(['search', '', '--json', '--limit', '100', '--data', data]);
    const ids = (JSON.parse(left.stdout) as { id: string }[]).map((b) => b.id).sort();
    expect(ids).toEqual(starts.map((b) => b.id).filter((id) => !listed.includes(id)).sort());
    // Nothing older is left: a second run deletes nothing.
    expect(cli(['prune', '--older-than', '15d', '--data', data]).stderr).toMatch(/^0 builds deleted/m);
  });

  it('answers mistakes with one line and creates nothing', () => {
    for (const [args, message] of [
      [['prune', '--older-than', '90', '--data', data], /--older-than needs an age such as 90d/],
      [['prune', '--older-than', 'soon', '--data', data], /--older-than needs an age/],
      [['prune', '--older-than', '90d', '--batch-size', '0', '--data', data], /--batch-size/],
      [['prune', '--older-than', '90d', '--data', join(dir, 'nowhere')], /no Buildscope database at/],
      [['prune', '--older-than', '90d', '--dry-run', '--data', join(dir, 'nowhere')], /no Buildscope database at/],
    ] as const) {
      const r = cli([...args]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(existsSync(join(dir, 'nowhere'))).toBe(false);
  });
});
