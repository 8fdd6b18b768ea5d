// The SQL tabs: the compiled query for SQLite and PostgreSQL, from the server's explain endpoint.

import type { ExplainResponse } from './api.js';
import { byId } from '../../ui/dom.js';

type Dialect = 'sqlite' | 'postgres';

let current: Dialect = 'sqlite';
let lastResponse: ExplainResponse | null = null;
let lastMessage = '';

function show(): void {
  const text = byId('sql-text');
  const params = byId('sql-params');
  const compiled = lastResponse?.sql?.[current];
  if (compiled) {
    text.textContent = compiled.sql;
    params.textContent = JSON.stringify(compiled.parameters);
  } else {
    text.textContent = lastMessage;
    params.textContent = '[]';
  }
}

function select(d: Dialect, focus: boolean): void {
  current = d;
  for (const [id, dialect] of [['tab-sqlite', 'sqlite'], ['tab-postgres', 'postgres']] as const) {
    const tab = byId(id);
    const on = dialect === d;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    if (on) {
      byId('sql-panel').setAttribute('aria-labelledby', id);
      if (focus) tab.focus();
    }
  }
  show();
}

export function setupSqlTabs(): void {
  const tabs: [string, Dialect][] = [
    ['tab-sqlite', 'sqlite'],
    ['tab-postgres', 'postgres'],
  ];
  for (const [id, d] of tabs) {
    const tab = byId(id);
    tab.addEventListener('click', () => select(d, false));
    // Arrow keys move between tabs, as the ARIA tabs pattern expects.
    tab.addEventListener('keydown', (ev) => {
      if (ev.key !== 'ArrowLeft' && ev.key !== 'ArrowRight' && ev.key !== 'Home' && ev.key !== 'End') return;
      ev.preventDefault();
      select(d === 'sqlite' ? 'postgres' : 'sqlite', true);
    });
  }
  show();
}

export function showSql(response: ExplainResponse | null, message = ''): void {
  lastResponse = response;
  lastMessage = message;
  show();
}
