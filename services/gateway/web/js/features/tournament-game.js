// A tournament game on the game screen (its `state` names the `tournament`):
// the tournament's name with "Back to the tournament", what a result
// scores now (double on fire, one more for a berserk win), the Berserk
// button before the seat's first move, and a berserk mark beside each
// side that went berserk. The tournament is read once per game
// (`GET /api/tournament/{id}`) for its name and the player's fire.

import { $ } from '../page.js';
import * as api from '../tournament-api.js';
import { swissUrl, tournamentUrl } from '../router.js';
import { isSeat, mayBerserk } from '../model.js';
import { atStake } from '../tournament-text.js';

let hooks = { berserk: () => {}, me: () => null, render: () => {} };
/** Game id → {name, fire} once read (null while being read). */
const read = new Map();

/** `berserk(model)` sends the berserk command; `me()` is this player's id; `render()` redraws. */
export function initTournamentGame(given) {
  hooks = { ...hooks, ...given };
  $('berserk').addEventListener('click', () => hooks.berserk());
}

function learn(model) {
  if (read.has(model.id)) return;
  read.set(model.id, null);
  api.get(model.tournament).then((t) => {
    const me = hooks.me();
    const line = ((t.standing && t.standing.players) || []).find((p) => p.id === me);
    const swiss = t.system === 'swiss';
    read.set(model.id, { name: t.fullName || t.name, fire: !!(line && line.sheet && line.sheet.fire), swiss });
    hooks.render();
  }).catch(() => {
    read.set(model.id, { name: 'Tournament', fire: false });
    hooks.render();
  });
}

/** The bar, the button and the marks for `model`; `canAct`: the seat on screen may act (no curtain, not looking back). */
export function renderTournamentGame(model, { canAct }) {
  const bar = $('tournament-bar');
  const inTournament = !!(model && model.tournament);
  bar.hidden = !inTournament;
  for (const strip of document.querySelectorAll('.strip[data-strip]')) {
    const mark = strip.querySelector('.berserk-mark');
    const color = strip.dataset.color;
    mark.dataset.testid = `berserk-mark-${color}`;
    mark.hidden = !(inTournament && model.berserk.includes(color));
  }
  if (inTournament) learn(model);
  const known = inTournament ? read.get(model.id) : null;
  // A Swiss has no berserk: a win is a point however long the game.
  $('berserk').hidden = !(inTournament && canAct && mayBerserk(model) && !(known && known.swiss));
  if (!inTournament) return;
  const link = $('tournament-back');
  link.href = known && known.swiss ? swissUrl(model.tournament) : tournamentUrl(model.tournament);
  const name = known ? known.name : 'Tournament';
  if ($('tournament-bar-name').textContent !== name) $('tournament-bar-name').textContent = name;
  const stake = !isSeat(model) || model.status === 'ended' ? ''
    : known && known.swiss ? 'A win scores 1 point, a draw ½.'
    : atStake({ fire: !!(known && known.fire), berserk: model.berserk.includes(model.you) });
  $('tournament-stake').textContent = stake;
  $('tournament-stake').hidden = !stake;
}
