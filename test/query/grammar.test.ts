import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { grammarJson, syntaxDiagramsHtml } from '../../src/query/diagrams.js';
import { parseQuery } from '../../src/query/index.js';

const committed = (name: string) => readFileSync(new URL(`../../grammar/${name}`, import.meta.url), 'utf8');
const HOW = 'the parser changed: run `node --import tsx grammar/generate.ts` and commit grammar/';

describe('grammar/', () => {
  it('the committed railroad diagrams match the parser', () => {
    expect(committed('diagrams.html'), HOW).toBe(syntaxDiagramsHtml());
  });

  it('the committed serialised grammar matches the parser', () => {
    expect(committed('grammar.json'), HOW).toBe(grammarJson());
  });

  it('the diagrams page loads its scripts from the repository, not from a CDN', () => {
    const html = committed('diagrams.html');
    expect(html).not.toMatch(/https?:\/\//);
    for (const src of html.matchAll(/(?:src|href)='\.\/([^']+)'/g)) {
      expect(() => readFileSync(new URL(`../../grammar/${src[1]}`, import.meta.url))).not.toThrow();
    }
  });

  it('every example in grammar/README.md parses as documented', () => {
    const readme = committed('README.md');
    const block = /```text examples\n([\s\S]*?)```/g;
    let count = 0;
    for (const m of readme.matchAll(block)) {
      for (const line of m[1]!.split('\n')) {
        const [query, verdict] = line.split(/\s{2,}#\s*/);
        if (query === undefined || query.trim() === '' || verdict === undefined) continue;
        const r = parseQuery(query.trim(), { now: 0 });
        expect(r.ok, `${query}: ${r.diagnostics.map((d) => d.message).join('; ')}`).toBe(!verdict.startsWith('error'));
        count++;
      }
    }
    expect(count).toBeGreaterThan(20);
  });
});

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

describe.skipIf(!existsSync(CHROMIUM))('grammar/diagrams.html in a browser', () => {
  it('draws one railroad diagram per parser rule, offline, without script errors', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      // Anything but the local file is refused: the page must not need the network.
      await page.route(/^(?!file:)/, (route) => route.abort());
      await page.goto(new URL('../../grammar/diagrams.html', import.meta.url).href);
      const rules = (JSON.parse(grammarJson()) as { name: string }[]).map((r) => r.name);
      await page.locator('svg').nth(rules.length - 1).waitFor();
      expect(await page.locator('svg').count()).toBe(rules.length);
      for (const rule of rules) expect(await page.getByText(rule, { exact: true }).count()).toBeGreaterThan(0);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
