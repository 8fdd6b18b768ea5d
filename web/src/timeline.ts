// The task timeline of a build: one bar per task on a time axis, coloured by outcome, drawn on a
// canvas so that 10,000 tasks stay smooth. Tasks that ran one after another share a lane
// (logic.ts packLanes); hovering a bar shows its path, outcome, start and duration; the buttons,
// the mouse wheel and dragging zoom into and move along the time axis.

import { h } from '../../ui/dom.js';
import type { TaskRow } from './api.js';
import { formatDuration, packLanes, taskAt } from './logic.js';

export const OUTCOME_COLOURS: Readonly<Record<TaskRow['outcome'], string>> = {
  executed: '#3b7dd8',
  'up-to-date': '#9aa4af',
  'from-cache': '#2e9e5b',
  skipped: '#d9c36a',
  'no-source': '#c9cfd6',
  failed: '#d2453b',
};

const LANE_HEIGHT_MAX = 18;
const LANE_HEIGHT_MIN = 3;
const AXIS = 22;

export function timeline(tasks: readonly TaskRow[]): HTMLElement {
  const { lanes, count } = packLanes(tasks);
  const laneHeight = Math.max(LANE_HEIGHT_MIN, Math.min(LANE_HEIGHT_MAX, Math.floor(420 / Math.max(1, count))));
  const height = AXIS + count * laneHeight + 4;
  const end = tasks.reduce((m, t) => Math.max(m, t.start + t.duration), 1);
  const byLane: number[][] = Array.from({ length: count }, () => []);
  tasks
    .map((_, i) => i)
    .sort((a, b) => tasks[a]!.start - tasks[b]!.start)
    .forEach((i) => byLane[lanes[i]!]!.push(i));

  const canvas = h('canvas', {
    id: 'timeline-canvas',
    role: 'img',
    'aria-label': `Timeline of ${tasks.length} tasks over ${formatDuration(end)} in ${count} lane${count === 1 ? '' : 's'}`,
  });
  const tip = h('div', { class: 'timeline-tip', role: 'tooltip', id: 'timeline-tip', hidden: true });
  const wrap = h('div', { class: 'timeline-wrap' }, canvas, tip);
  const legend = h(
    'ul',
    { class: 'legend' },
    ...(Object.keys(OUTCOME_COLOURS) as TaskRow['outcome'][]).map((o) => {
      const swatch = h('span', { class: 'swatch' });
      swatch.style.background = OUTCOME_COLOURS[o];
      return h('li', {}, swatch, `${o} (${tasks.filter((t) => t.outcome === o).length})`);
    }),
  );

  // The visible window of the time axis (ms after the build's start): zoom with the buttons or
  // the mouse wheel (around the pointer), pan by dragging.
  let v0 = 0;
  let v1 = end;
  const windowText = h('span', { class: 'muted small', id: 'timeline-window', role: 'status' });
  const zoom = (factor: number, at = (v0 + v1) / 2) => {
    const span = Math.min(end, Math.max(10, (v1 - v0) * factor));
    v0 = Math.max(0, Math.min(end - span, at - (at - v0) * (span / (v1 - v0))));
    v1 = v0 + span;
    draw();
  };
  const zoomIn = h('button', { type: 'button', id: 'timeline-zoom-in', title: 'Zoom in (or the mouse wheel)' }, 'Zoom in');
  const zoomOut = h('button', { type: 'button', id: 'timeline-zoom-out' }, 'Zoom out');
  const reset = h('button', { type: 'button', id: 'timeline-reset' }, 'Whole build');
  zoomIn.addEventListener('click', () => zoom(0.5));
  zoomOut.addEventListener('click', () => zoom(2));
  reset.addEventListener('click', () => {
    v0 = 0;
    v1 = end;
    draw();
  });

  let width = 0;
  const draw = () => {
    windowText.textContent = v0 === 0 && v1 === end ? `showing the whole build (${formatDuration(end)})` : `showing +${formatDuration(v0)} to +${formatDuration(v1)}`;
    width = wrap.clientWidth || 900;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    const g = canvas.getContext('2d');
    if (!g) return;
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    // Axis: about eight ticks at round durations.
    g.fillStyle = getComputedStyle(wrap).color;
    g.font = '11px system-ui, sans-serif';
    const span = v1 - v0;
    const step = niceStep(span / 8);
    for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      const x = ((t - v0) / span) * (width - 1);
      g.fillRect(x, AXIS - 6, 1, 5);
      g.fillText(formatDuration(t), Math.min(x + 2, width - 40), 11);
    }
    const gap = laneHeight > 6 ? 2 : laneHeight > 3 ? 1 : 0;
    for (let i = 0; i < tasks.length; i++) {
      const t = tasks[i]!;
      if (t.start > v1 || t.start + t.duration < v0) continue;
      const x = ((t.start - v0) / span) * width;
      const w = Math.max(1, (t.duration / span) * width);
      g.fillStyle = OUTCOME_COLOURS[t.outcome];
      g.fillRect(x, AXIS + lanes[i]! * laneHeight, w, laneHeight - gap);
    }
  };
  const hover = (ev: MouseEvent) => {
    const rect = canvas.getBoundingClientRect();
    const lane = Math.floor((ev.clientY - rect.top - AXIS) / laneHeight);
    const at = v0 + ((ev.clientX - rect.left) / rect.width) * (v1 - v0);
    const i = lane < 0 ? -1 : taskAt(byLane, tasks, lane, at, (2 / rect.width) * (v1 - v0));
    if (i < 0) {
      tip.hidden = true;
      return;
    }
    const t = tasks[i]!;
    tip.replaceChildren(h('strong', {}, t.path), h('br'), `${t.outcome} · started at +${formatDuration(t.start)} · took ${formatDuration(t.duration)}${t.cacheable === null ? '' : t.cacheable ? ' · cacheable' : ' · not cacheable'}`);
    tip.hidden = false;
    tip.style.left = `${Math.min(ev.clientX - rect.left + 12, rect.width - 260)}px`;
    tip.style.top = `${ev.clientY - rect.top + 14}px`;
  };
  canvas.addEventListener('mousemove', hover);
  canvas.addEventListener('mouseleave', () => (tip.hidden = true));
  canvas.addEventListener(
    'wheel',
    (ev) => {
      ev.preventDefault();
      const rect = canvas.getBoundingClientRect();
      zoom(ev.deltaY < 0 ? 0.8 : 1.25, v0 + ((ev.clientX - rect.left) / rect.width) * (v1 - v0));
    },
    { passive: false },
  );
  let dragFrom: { x: number; v0: number } | undefined;
  canvas.addEventListener('mousedown', (ev) => (dragFrom = { x: ev.clientX, v0 }));
  window.addEventListener('mouseup', () => (dragFrom = undefined));
  canvas.addEventListener('mousemove', (ev) => {
    if (dragFrom === undefined || ev.buttons !== 1) return;
    const span = v1 - v0;
    v0 = Math.max(0, Math.min(end - span, dragFrom.v0 - ((ev.clientX - dragFrom.x) / canvas.getBoundingClientRect().width) * span));
    v1 = v0 + span;
    draw();
  });
  new ResizeObserver(() => {
    if (wrap.clientWidth !== width) draw();
  }).observe(wrap);
  requestAnimationFrame(draw);
  return h('div', { class: 'timeline' }, h('div', { class: 'timeline-bar' }, legend, h('span', { class: 'timeline-zoom' }, zoomIn, zoomOut, reset, windowText)), wrap);
}

function niceStep(raw: number): number {
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000];
  return steps.find((s) => s >= raw) ?? Math.ceil(raw / 3_600_000) * 3_600_000;
}
