// Pieces the Tests page, a test's page, a failure group's page and the trends share: a test's name
// as a link to its page, the verdict badge, the estimated failure probability drawn as a dot on its
// 95% interval, and the failure groups, each linking to its page.

import { h } from '../../ui/dom.js';
import type { Estimate, FailureGroupRow, VerdictKind } from './api.js';
import { buildUrl, failureGroupUrl, formatStart, testUrl } from './logic.js';
import { estimateText, pct, VERDICT_LABELS } from './test-text.js';

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes (the `h` helper makes HTML elements only). */
export function svg<K extends keyof SVGElementTagNameMap>(name: K, attrs: Readonly<Record<string, string | number>>, ...children: (SVGElement | string)[]): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const c of children) e.append(c);
  return e;
}

interface Named {
  readonly testId: number;
  readonly suite: string;
  readonly name: string;
  readonly parameters: string;
  readonly project: string | null;
}

/** The test's name, linking to its page, with its suite and project underneath (muted). */
export function testLink(t: Named, withProject = true): HTMLElement {
  const where = [t.suite, withProject ? t.project : null].filter((x): x is string => x !== null && x !== '').join(' · ');
  return h(
    'div',
    { class: 'test-cell' },
    h('a', { href: testUrl(t.testId), class: 'test-link', 'data-test-id': String(t.testId) }, h('strong', {}, t.name), t.parameters ? h('span', { class: 'muted' }, ` [${t.parameters}]`) : ''),
    where !== '' ? h('div', { class: 'test-where muted' }, where) : '',
  );
}

export function verdictBadge(kind: VerdictKind): HTMLElement {
  return h('span', { class: `verdict ${kind}` }, VERDICT_LABELS[kind]);
}

/**
 * The failure probability as a dot on its interval over 0–100%, and the numbers beside it: where
 * the estimate is and how sure it is, at a glance (a wide bar: few runs).
 */
export function estimateView(e: Estimate, kind: VerdictKind): HTMLElement {
  const w = 96;
  const x = (v: number) => 2 + v * (w - 4);
  const bar = svg(
    'svg',
    { class: `estimate-bar ${kind}`, viewBox: `0 0 ${w} 12`, width: w, height: 12, 'aria-hidden': 'true' },
    svg('line', { class: 'track', x1: x(0), x2: x(1), y1: 6, y2: 6 }),
    svg('rect', { class: 'interval', x: x(e.low), y: 2, width: Math.max(1.5, x(e.high) - x(e.low)), height: 8, rx: 2 }),
    svg('circle', { class: 'point', cx: x(e.p), cy: 6, r: 3 }),
  );
  return h(
    'span',
    { class: 'estimate', title: `Failure probability per attempt: ${estimateText(e)}, from ${e.failures} failed of ${e.trials} attempts` },
    bar,
    h('strong', { class: 'estimate-p' }, pct(e.p)),
    h('span', { class: 'estimate-interval muted' }, `${pct(e.low)}–${pct(e.high)}`),
  );
}

/** A group's example message as a link to its page (over the builds of `query`), with its pattern underneath when it differs. */
export function groupLink(g: FailureGroupRow, query: string): HTMLElement {
  return h(
    'div',
    { class: 'group-cell' },
    h('a', { href: failureGroupUrl(g.groupId, query), class: 'group-link group-sample', 'data-group-id': String(g.groupId) }, g.sample),
    g.key !== g.sample ? h('div', { class: 'group-key muted', title: 'What the failures of this group share (numbers, paths, hashes and times left out)' }, g.key) : '',
  );
}

/** The failure groups of a query's builds: each with its builds, tests, failures, first and last seen (a link to its latest build). */
export function failureGroupsTable(groups: readonly FailureGroupRow[], query: string, id: string): HTMLElement {
  if (groups.length === 0) return h('p', { class: 'muted', id }, 'No failures in these builds.');
  const count = (n: number) => h('td', { class: 'num' }, n.toLocaleString('en-US'));
  return h(
    'table',
    { class: 'results failure-groups', id },
    h('thead', {}, h('tr', {}, ...['Failure', 'Builds', 'Tests', 'Failures', 'First seen', 'Last seen'].map((c, i) => h('th', { scope: 'col', class: i === 0 ? '' : 'col-count' }, c)))),
    h(
      'tbody',
      {},
      ...groups.map((g) =>
        h(
          'tr',
          { 'data-group-id': String(g.groupId) },
          h('td', {}, groupLink(g, query)),
          count(g.builds),
          count(g.tests),
          count(g.failures),
          h('td', { class: 'nowrap' }, formatStart(g.firstSeen)),
          h('td', { class: 'nowrap' }, g.lastBuildId === '' ? formatStart(g.lastSeen) : h('a', { href: buildUrl(g.lastBuildId), class: 'group-last-build', title: `The latest build with this failure: ${g.lastBuildId}` }, formatStart(g.lastSeen))),
        ),
      ),
    ),
  );
}
