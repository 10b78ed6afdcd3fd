// "Request a computer analysis" on a finished game, and what it gives: an
// evaluation graph under the move list, each side's accuracy, and the
// marks (?!, ?, ??) the move list shows with the better move on hover. The
// page asks the gateway (`/api/games/{id}/analysis`, docs/protocol.md)
// once when a finished game opens, again when the button is pressed, and
// then every 2 s until the analysis is done. Offline and one-device games
// are not on the server and have no button.

import { $, notice } from '../page.js';
import { analysisView, graphPath, markTitle } from '../analysis.js';
import { isOfflineGame } from '../../offline/offline.js';

const POLL_MS = 2000;
const WIDTH = 300;
const HEIGHT = 60;

/** Per game id: `{state, view}` as last heard. */
const known = new Map();
let rerender = () => {};
let polling = null;

/** `render()` redraws the game screen when an analysis arrives. */
export function initComputerAnalysis(render) {
  rerender = render;
  $('analysis-request').addEventListener('click', () => request());
}

const url = (id) => `/api/games/${encodeURIComponent(id)}/analysis`;

async function fetchAnalysis(id, method = 'GET') {
  const response = await fetch(url(id), { method, headers: { accept: 'application/json' } });
  const body = await response.json().catch(() => null);
  if (!response.ok) return { error: body && body.message, status: response.status };
  return { analysis: body };
}

function remember(id, analysis) {
  known.set(id, { state: analysis.state, view: analysisView(analysis) });
  if (analysis.state === 'queued') schedule(id);
  rerender();
}

function schedule(id) {
  clearTimeout(polling);
  polling = setTimeout(async () => {
    const { analysis } = await fetchAnalysis(id);
    if (analysis) remember(id, analysis);
  }, POLL_MS);
}

let current = null;

async function request() {
  const id = current;
  if (!id) return;
  $('analysis-request').disabled = true;
  const { analysis, error } = await fetchAnalysis(id, 'POST');
  $('analysis-request').disabled = false;
  if (error) {
    notice(error || 'The analysis could not be requested.', 'error');
    return;
  }
  remember(id, analysis);
}

/** The marks of the game on screen, by ply (0 for the first move). */
export function analysisMarks(id) {
  return known.get(id)?.view?.marks || {};
}

export { markTitle };

/** Shows the button, the progress, the graph and the accuracies for `model`. */
export function renderComputerAnalysis(model, { hotseat }) {
  const section = $('analysis');
  const online = model.status === 'ended' && model.result !== '*' && !hotseat && !isOfflineGame(model.id);
  section.hidden = !online;
  if (!online) return;
  if (current !== model.id) {
    current = model.id;
    if (!known.has(model.id)) {
      known.set(model.id, { state: 'none', view: null });
      fetchAnalysis(model.id).then(({ analysis }) => analysis && remember(model.id, analysis));
    }
  }
  const { state, view } = known.get(model.id);
  $('analysis-request').hidden = state !== 'none' && state !== 'failed';
  const status = $('analysis-status');
  status.textContent = state === 'queued' ? 'The computer is analysing this game…' : state === 'failed' ? 'The analysis failed.' : '';
  const graph = $('eval-graph');
  graph.hidden = !view;
  $('accuracy').hidden = !view;
  if (!view) return;
  graph.querySelector('path').setAttribute('d', graphPath(view.wins, WIDTH, HEIGHT));
  const pct = (a) => (a == null ? '–' : `${Math.round(a)}%`);
  $('accuracy-white').textContent = pct(view.accuracy.white);
  $('accuracy-black').textContent = pct(view.accuracy.black);
}
