/* global document, window, location */
// The viewer's router: `#/` tapes, `#/tape?name=N&step=S` a run at step S (the step number `tapedeck show` prints),
// `#/debrief?name=N`, `#/compare?a=A&b=B`.
// A view is rendered whole into <main>; it returns what to do when it is left (close its live stream, its keys).
import { compareView } from './compare-view.js';
import { debriefView } from './debrief-view.js';
import { h, hashOf, parseHash } from './dom.js';
import { listView } from './list-view.js';
import { runView } from './run-view.js';

const VIEWS = { tapes: listView, tape: runView, debrief: debriefView, compare: compareView };

let current = null; // { key, view }

async function route() {
  const { view, params } = parseHash(location.hash);
  const key = `${view}?${params.name ?? ''}&${params.a ?? ''}&${params.b ?? ''}`;
  // Moving between steps of the open run only updates it.
  if (current && current.key === key && current.view?.update) {
    current.view.update(params);
    return;
  }
  disposeCurrent();
  const main = document.getElementById('main');
  main.replaceChildren();
  document.body.dataset.view = view;
  crumbs(view, params);
  const render = VIEWS[view];
  if (!render) {
    main.append(h('p', { class: 'error-line' }, `unknown page ${location.hash}`), h('a', { href: '#/' }, 'back to the tapes'));
    return;
  }
  main.classList.add('loading');
  try {
    const result = await render(main, params);
    current = { key, view: typeof result === 'function' ? { dispose: result } : result };
    document.body.dataset.ready = view;
  } catch (err) {
    main.append(h('p', { class: 'error-line', id: 'error' }, String(err?.message ?? err)), h('a', { href: '#/' }, 'back to the tapes'));
    current = { key, view: null };
  } finally {
    main.classList.remove('loading');
  }
}

function disposeCurrent() {
  current?.view?.dispose?.();
  current = null;
  delete document.body.dataset.ready;
}

function crumbs(view, params) {
  const nav = document.getElementById('crumbs');
  const parts = [h('a', { href: '#/' }, 'tapes')];
  if (params.name) parts.push(' / ', h('a', { href: hashOf('tape', { name: params.name }) }, params.name));
  if (view === 'debrief') parts.push(' / debrief');
  if (view === 'compare') parts.push(' / compare');
  nav.replaceChildren(...parts);
}

window.addEventListener('hashchange', () => void route());
void route();
