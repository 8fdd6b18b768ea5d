// The web app's shell: who is signed in, the navigation, and which page the address shows.
// Links inside the app change the address with pushState (no reload); back and forward redraw
// the page from the address, which is the whole state of every page.

import { h } from '../../ui/dom.js';
import { currentSession, signIn, signOut, type Session } from './api.js';
import { buildPage } from './build-page.js';
import { comparePage } from './compare-page.js';
import { failureGroupPage } from './failure-group-page.js';
import { listPage } from './list-page.js';
import { routeOf, safeNext } from './logic.js';
import type { PageContext } from './page.js';
import { testPage } from './test-page.js';
import { testsPage } from './tests-page.js';
import { trendsPage } from './trends-page.js';

const main = document.getElementById('app') as HTMLElement;
let session: Session | null = null;
let current: AbortController | undefined;

function setTitle(title: string): void {
  document.title = `${title} · Buildscope`;
}

function navigate(url: string, replace = false): void {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  void show();
}

function markNav(page: string): void {
  for (const a of document.querySelectorAll<HTMLAnchorElement>('[data-nav]')) {
    if (a.dataset['nav'] === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function showUser(): void {
  const box = document.getElementById('user-box')!;
  box.hidden = session === null;
  document.getElementById('user-name')!.textContent = session ? session.user : '';
}

async function show(): Promise<void> {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  document.body.dataset['ready'] = 'false';
  const route = routeOf(location.pathname, location.search);
  if (session === null && route.page !== 'signin') {
    // A shared link opened while signed out: sign in, then come back to it.
    history.replaceState(null, '', `/signin?next=${encodeURIComponent(location.pathname + location.search)}`);
    return show();
  }
  markNav(route.page === 'build' || route.page === 'compare' ? 'builds' : route.page === 'test' || route.page === 'failure-group' ? 'tests' : route.page);
  const ctx: PageContext = {
    main,
    session: session!,
    signal: controller.signal,
    navigate,
    setTitle,
    ready: () => {
      if (controller.signal.aborted) return;
      document.body.dataset['ready'] = 'true';
      // When the page's first screen was complete (bench/first-screen.ts reads it).
      performance.mark('page-ready');
    },
  };
  switch (route.page) {
    case 'builds':
      return listPage(ctx, route.query, route.after);
    case 'build':
      return buildPage(ctx, route.id);
    case 'compare':
      return comparePage(ctx, route.a, route.b);
    case 'trends':
      return trendsPage(ctx, route.query, route.interval, route.days);
    case 'tests':
      return testsPage(ctx, route.query);
    case 'test':
      return testPage(ctx, route.id);
    case 'failure-group':
      return failureGroupPage(ctx, route.id, route.query);
    case 'signin':
      if (session !== null) return navigate(route.next, true);
      return signInPage(ctx, route.next);
    case 'unknown':
      setTitle('Not found');
      main.replaceChildren(h('h1', {}, 'No such page'), h('p', {}, h('a', { href: '/builds' }, 'All builds')));
      ctx.ready();
      return;
  }
}

function signInPage(ctx: PageContext, next: string): void {
  setTitle('Sign in');
  markNav('');
  const message = h('p', { class: 'auth-message', role: 'alert', id: 'sign-in-message' });
  const userInput = h('input', { id: 'user', name: 'user', autocomplete: 'username', required: true, spellcheck: 'false' });
  const passwordInput = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const passwordForm = h(
    'form',
    { class: 'panel sign-in-form', id: 'password-form', 'aria-labelledby': 'password-heading' },
    h('h2', { id: 'password-heading' }, 'With your user name and password'),
    h('label', { for: 'user' }, 'User name'),
    userInput,
    h('label', { for: 'password' }, 'Password'),
    passwordInput,
    h('button', { type: 'submit', id: 'sign-in-button' }, 'Sign in'),
  );
  const keyInput = h('input', { id: 'access-key', name: 'accessKey', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' });
  const keyForm = h(
    'form',
    { class: 'panel sign-in-form', id: 'key-form', 'aria-labelledby': 'key-heading' },
    h('h2', { id: 'key-heading' }, 'Or with an access key'),
    h('label', { for: 'access-key' }, 'Access key'),
    keyInput,
    h('button', { type: 'submit' }, 'Sign in with the key'),
  );
  const submit = (body: { user: string; password: string } | { accessKey: string }) => async (ev: Event) => {
    ev.preventDefault();
    message.textContent = 'Signing in…';
    try {
      session = await signIn(body);
      showUser();
      navigate(safeNext(next), true);
    } catch (err) {
      message.textContent = `Sign-in failed: ${(err as Error).message}`;
    }
  };
  passwordForm.addEventListener('submit', (ev) => void submit({ user: userInput.value, password: passwordInput.value })(ev));
  keyForm.addEventListener('submit', (ev) => void submit({ accessKey: keyInput.value.trim() })(ev));
  main.replaceChildren(h('h1', {}, 'Sign in to Buildscope'), message, h('div', { class: 'sign-in-forms' }, passwordForm, keyForm));
  userInput.focus();
  ctx.ready();
}

function interceptLinks(): void {
  document.addEventListener('click', (ev) => {
    if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    const a = (ev.target as Element | null)?.closest('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !/^\/(builds|trends|tests|failure-groups|signin|compare)(\/|$)/.test(url.pathname)) return;
    ev.preventDefault();
    navigate(url.pathname + url.search);
    main.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  });
  window.addEventListener('popstate', () => void show());
}

async function start(): Promise<void> {
  interceptLinks();
  document.getElementById('sign-out')!.addEventListener('click', async () => {
    await signOut();
    session = null;
    showUser();
    navigate('/signin', false);
  });
  try {
    session = await currentSession();
  } catch {
    session = null;
  }
  showUser();
  await show();
}

void start();
