// A small stacked bar chart of matches per day, drawn as inline SVG (no chart library).

import type { DayCount, Outcome } from './chart-data.js';

const SVG = 'http://www.w3.org/2000/svg';
const OUTCOMES: readonly Outcome[] = ['succeeded', 'failed', 'unknown'];

function el<K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** A "nice" axis maximum: 1, 2 or 5 times a power of ten, at least `max`. */
function niceMax(max: number): number {
  if (max <= 5) return Math.max(1, max);
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

export function renderChart(days: readonly DayCount[]): SVGSVGElement {
  const width = 640;
  const height = 180;
  const left = 36;
  const bottom = 22;
  const top = 8;
  const plotW = width - left - 8;
  const plotH = height - top - bottom;
  const total = (d: DayCount) => d.succeeded + d.failed + d.unknown;
  const max = niceMax(Math.max(0, ...days.map(total)));
  const matches = days.reduce((n, d) => n + total(d), 0);

  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart-svg' });
  const summary =
    days.length === 0
      ? 'No matches to chart.'
      : `${matches} matches over ${days.length} day${days.length === 1 ? '' : 's'}, from ${days[0]!.day} to ${days[days.length - 1]!.day}; busiest day ${max} or fewer.`;
  svg.setAttribute('aria-label', summary);

  // Horizontal grid lines with their values.
  // Only whole counts are labelled: a middle line only when half the maximum is a whole number.
  const ticks = max % 2 === 0 ? [0, max / 2, max] : [0, max];
  for (const tick of ticks) {
    const y = top + plotH - (tick / max) * plotH;
    svg.append(el('line', { x1: left, x2: left + plotW, y1: y, y2: y, class: 'grid' }));
    const label = el('text', { x: left - 4, y: y + 4, 'text-anchor': 'end', class: 'axis' });
    label.textContent = String(tick);
    svg.append(label);
  }

  const slot = days.length > 0 ? plotW / days.length : plotW;
  const barW = Math.max(1, Math.min(28, slot * 0.8));
  days.forEach((d, i) => {
    const x = left + i * slot + (slot - barW) / 2;
    let y = top + plotH;
    const g = el('g', { class: 'bar', 'data-day': d.day });
    const title = el('title', {});
    title.textContent = `${d.day}: ${d.succeeded} succeeded, ${d.failed} failed, ${d.unknown} unknown`;
    g.append(title);
    for (const o of OUTCOMES) {
      const n = d[o];
      if (n === 0) continue;
      const h = (n / max) * plotH;
      y -= h;
      g.append(el('rect', { x, y, width: barW, height: h, class: o }));
    }
    svg.append(g);
  });

  // Day labels: the first, the last and a few in between, so they never overlap.
  const every = Math.max(1, Math.ceil(days.length / 6));
  days.forEach((d, i) => {
    if (i % every !== 0 && i !== days.length - 1) return;
    if (i !== days.length - 1 && days.length - 1 - i < every / 2) return;
    const t = el('text', { x: left + i * slot + slot / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis' });
    t.textContent = d.day.slice(5);
    svg.append(t);
  });
  return svg;
}
