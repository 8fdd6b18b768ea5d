// What every page gets from the shell (main.ts).

import type { Session } from './api.js';

export interface PageContext {
  readonly main: HTMLElement;
  readonly session: Session;
  /** Aborted when the person leaves the page (another address is shown). */
  readonly signal: AbortSignal;
  /** Shows another address of the app (pushState, or replaceState when `replace`). */
  navigate(url: string, replace?: boolean): void;
  setTitle(title: string): void;
  /** The page's first screen is drawn (tests and the load-time measurement wait for it). */
  ready(): void;
}
