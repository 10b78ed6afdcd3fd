// The board: 64 `.square` elements in a grid, each holding at most one
// `.piece`. It draws a position with its fog, last move, check, legal-move
// hints and lost-piece flags, and turns drags, clicks, taps and keys into
// moves. Squares and pieces are found under the pointer with
// elementFromPoint, never by coordinate math, so the tilted 3D board works
// the same as the flat one: in 3D a piece stands over the squares behind
// it, and a click on its drawn shape picks it (see `pick`).

import { pieceSvg } from '../art/pieces.js';
import { sq, name, fileOf, rankOf, drawMove, placementOf } from './chess.js';
import { Annotations, brushOf } from './annotations.js';

const DRAG_THRESHOLD = 5;
/** Classes a view's `marks` may put on squares, beside the board's own. */
const MARK_CLASSES = ['blast', 'blast-own-king', 'refused', 'target'];
const REDUCED_MOTION = window.matchMedia('(prefers-reduced-motion: reduce)');

export class Board {
  /**
   * @param {HTMLElement} container  receives the board and its promotion picker
   * @param {object} opts
   * @param {(uci: string) => void} opts.onMove
   * @param {(refusal: {reason?: string, from: string, to?: string, role?: string}) => void} opts.onRefused
   *   a move the board would not send: not among the legal moves (no `reason`:
   *   the caller asks the rules why), or a piece touched while the view's
   *   `lock` says why none may move
   * @param {(event: KeyboardEvent) => boolean} [opts.onKey]  first look at keys; true when handled
   * @param {(uci: string|null) => void} [opts.onPremove]  a move queued while the opponent is to
   *   move (the view's `premove` colour), or null when the player cancelled it
   * @param {() => boolean} [opts.autoQueen]  promote to a queen without asking
   * @param {(from: string, to: string) => ({squares: string[], ownKing: string|null}|null)} [opts.blastOf]
   *   what a capture would blow up, previewed while the player points at it
   */
  constructor(container, opts) {
    this.opts = opts;
    this.container = container;
    this.el = document.createElement('div');
    this.el.className = 'board';
    this.el.dataset.testid = 'board';
    this.el.tabIndex = 0;
    this.el.setAttribute('role', 'grid');
    this.el.setAttribute('aria-label', 'Chess board: arrow keys move the cursor, Enter or Space picks up and drops a piece');
    this.picker = document.createElement('div');
    this.picker.className = 'promotion';
    this.picker.dataset.testid = 'promotion';
    this.picker.hidden = true;
    this.picker.setAttribute('role', 'dialog');
    this.picker.setAttribute('aria-label', 'Promote to');
    container.append(this.el, this.picker);

    this.orientation = 'white';
    this.mode = '2d';
    this.theme = 'felt';
    this.view = { board: new Array(64).fill(null), fog: null, last: null, check: -1, lost: new Set(), movable: null, legal: null, variant: 'standard', turn: 'w', seat: null, lock: null, marks: null };
    this.selected = -1;
    this.cursor = sq('e2');
    this.pending = null;
    this.drag = null;
    /** A finger held on a capture to see its blast (touch screens): {from, id}, or null. */
    this.aim = null;
    /** The square under the pointer while a piece is picked up, or -1. */
    this.hover = -1;
    this.squares = [];
    this.annotations = new Annotations();
    /** The position the arrows and circles were drawn on: another one clears them. */
    this.annotatedOn = '';
    this.build();
    this.bind();
  }

  /** Square elements by index (a1 = 0). */
  square(i) { return this.squares[i]; }

  build() {
    this.el.textContent = '';
    this.el.dataset.orientation = this.orientation;
    this.el.dataset.mode = this.mode;
    this.squares = new Array(64);
    const white = this.orientation === 'white';
    for (let row = 0; row < 8; row++) {
      // A row of the grid for assistive technology; it draws no box of its own (display: contents).
      const rowEl = document.createElement('div');
      rowEl.className = 'board-row';
      rowEl.setAttribute('role', 'row');
      for (let col = 0; col < 8; col++) {
        const rank = white ? 7 - row : row;
        const file = white ? col : 7 - col;
        const i = rank * 8 + file;
        const el = document.createElement('div');
        el.className = `square ${(rank + file) % 2 === 0 ? 'dark' : 'light'}`;
        el.dataset.square = name(i);
        Object.assign(el.dataset, looksOf(row * 8 + col + 1));
        el.setAttribute('role', 'gridcell');
        if (row === 7) el.append(coord('coord coord-file', 'abcdefgh'[file]));
        if (col === 0) el.append(coord('coord coord-rank', String(rank + 1)));
        this.squares[i] = el;
        rowEl.append(el);
      }
      this.el.append(rowEl);
    }
    this.annotations.setOrientation(this.orientation);
    this.el.append(this.annotations.el);
    this.drawn = new Array(64).fill('');
    // A board drawn afresh shows its last move without a slide.
    this.slid = this.view.last ? this.view.last.join('') : '';
    this.render();
  }

  setOrientation(orientation) {
    if (orientation === this.orientation) return;
    this.orientation = orientation;
    this.build();
  }

  setLook(mode, theme) {
    const changed = mode !== this.mode || theme !== this.theme;
    this.mode = mode;
    this.theme = theme;
    this.el.dataset.mode = mode;
    if (changed) {
      this.drawn.fill('');
      this.render();
    }
  }

  /**
   * Shows a position. `view`: {board, fog: Set of fogged square names or null,
   * last: [from, to] names or null, check: index or -1, lost: Set of names,
   * movable: 'w'|'b'|null (whose pieces the user may move), legal: array of
   * UCI or null (no hints), variant, turn, seat: 'w'|'b'|null (the player's
   * colour), lock: why the player may not move now, or null, marks: Map of
   * square name to a list of MARK_CLASSES, or null, premove: 'w'|'b'|null (whose
   * pieces may queue a move while the opponent thinks), queued: the queued UCI
   * or null}.
   */
  show(view) {
    this.view = { ...this.view, ...view };
    this.pending = null;
    if (this.selected >= 0 && !this.canPick(this.selected)) this.selected = -1;
    this.render();
  }

  /** The set the pieces are drawn in: the one chosen apart, or the board theme's own. */
  get pieceTheme() { return this.pieceSet || this.theme; }

  /** Draws the pieces in another theme's set than the board's (null: the board's own). */
  setPieceSet(theme) {
    if ((theme || null) === (this.pieceSet || null)) return;
    this.pieceSet = theme || null;
    this.drawn.fill('');
    this.render();
  }

  svg(color, role) {
    // Not cached: every drawing has gradient ids of its own.
    try { return pieceSvg(this.pieceTheme, color, role, this.mode === '3d' ? '3d' : '2d'); } catch { return ''; }
  }

  /** A small flat drawing of a piece in the board's set, for beside the names. */
  icon(color, role) {
    try { return pieceSvg(this.pieceTheme, color, role, '2d'); } catch { return ''; }
  }

  render() {
    const v = this.view;
    const board = this.pending ? this.pending.board : v.board;
    const shown = placementOf(board) + (v.last ? v.last.join('') : '');
    if (shown !== this.annotatedOn) {
      this.annotatedOn = shown;
      this.annotations.clear();
    }
    const targets = this.targetsOf(this.selected);
    const last = this.pending ? this.pending.last : v.last;
    const preview = this.blastPreview();
    for (let i = 0; i < 64; i++) {
      const el = this.squares[i];
      const n = name(i);
      const fogged = !!(v.fog && v.fog.has(n));
      const p = fogged ? null : board[i];
      el.classList.toggle('fog', fogged);
      el.classList.toggle('last-move', !!(last && (last[0] === n || last[1] === n)));
      el.classList.toggle('selected', i === this.selected);
      el.classList.toggle('hint', targets.has(i));
      el.classList.toggle('hint-capture', targets.has(i) && !!p);
      el.classList.toggle('check', i === v.check && !this.pending);
      el.classList.toggle('cursor', i === this.cursor);
      el.classList.toggle('movable', !!(p && v.movable && p.c === v.movable));
      el.classList.toggle('premove', !!(v.queued && (v.queued.slice(0, 2) === n || v.queued.slice(2, 4) === n)));
      const key = p ? p.c + p.r : '';
      if (this.drawn[i] !== key) {
        this.drawn[i] = key;
        const old = el.querySelector('.piece');
        if (old) old.remove();
        if (p) {
          const piece = document.createElement('div');
          piece.className = 'piece';
          piece.dataset.color = p.c;
          piece.dataset.role = p.r;
          piece.innerHTML = this.svg(p.c, p.r);
          el.append(piece);
        }
      }
      const flagged = v.lost.has(n);
      const flag = el.querySelector('.lost-flag');
      if (flagged && !flag) {
        const f = document.createElement('div');
        f.className = 'lost-flag';
        f.title = 'You lost a piece here';
        el.append(f);
      } else if (!flagged && flag) {
        flag.remove();
      }
      const marks = (preview && preview.get(n)) || (v.marks && v.marks.get(n)) || null;
      for (const mark of MARK_CLASSES) el.classList.toggle(mark, !!marks && marks.includes(mark));
      el.setAttribute('aria-label', describeSquare(n, p, fogged));
    }
    this.slide(last);
  }

  /**
   * Slides the piece of a new last move from its square to where it landed.
   * Offsets are layout positions inside the board, so the slide follows the
   * board's plane in 3D too; `translate` adds to the 3D pieces' own transform.
   */
  slide(last) {
    const key = last ? last.join('') : '';
    if (key === this.slid) return;
    this.slid = key;
    if (!last || this.dropped === key) { this.dropped = null; return; }
    const from = this.squares[sq(last[0])], to = this.squares[sq(last[1])];
    const piece = to && to.querySelector('.piece');
    if (!from || !piece || !piece.animate || REDUCED_MOTION.matches) return;
    const dx = from.offsetLeft - to.offsetLeft, dy = from.offsetTop - to.offsetTop;
    piece.animate([{ translate: `${dx}px ${dy}px` }, { translate: '0 0' }], { duration: 180, easing: 'ease-out' });
  }

  /**
   * The blast of the capture pointed at (by the mouse, a drag, or the
   * keyboard cursor) with a piece picked up: Map of square to marks, the
   * player's own king marked apart; only squares in sight. Null otherwise.
   */
  blastPreview() {
    return this.blastMarks(this.selected, this.el.dataset.input === 'keyboard' ? this.cursor : this.hover);
  }

  /** What the capture `from`-`to` would blow up, as blastPreview's marks, or null. */
  blastMarks(from, to) {
    if (!this.opts.blastOf || from < 0 || to < 0 || to === from || this.pending) return null;
    const mover = this.view.board[from];
    const target = this.visiblePiece(to);
    const enPassant = mover && mover.r === 'p' && fileOf(from) !== fileOf(to) && !this.view.board[to];
    if (!mover || (!enPassant && (!target || target.c === mover.c))) return null;
    const blast = this.opts.blastOf(name(from), name(to));
    if (!blast) return null;
    const marks = new Map();
    for (const n of blast.squares) {
      if (this.view.fog && this.view.fog.has(n)) continue;
      marks.set(n, n === blast.ownKing ? ['blast', 'blast-own-king'] : ['blast']);
    }
    return marks;
  }

  /** The pointer is over square `i` (-1: off the board): redraw a changed blast preview. */
  pointAt(i) {
    if (i === this.hover) return;
    this.hover = i;
    if (this.selected >= 0) this.render();
  }

  // --- moving ---------------------------------------------------------

  canPick(i) {
    const p = this.view.board[i];
    const side = this.view.movable || this.view.premove;
    return !!(p && side && p.c === side && !this.pending && !(this.view.fog && this.view.fog.has(name(i))));
  }

  /** The player may move now, or queue a premove. */
  canAct() {
    return !this.pending && !!(this.view.movable || this.view.premove);
  }

  /** A premove is queued and square `i` cancels it: its piece, or an empty square with nothing picked up. */
  cancelsPremove(i) {
    const q = this.view.queued;
    if (!q || this.view.movable) return false;
    return name(i) === q.slice(0, 2) || (this.selected < 0 && !this.view.board[i]);
  }

  /**
   * Plays the queued move `uci` now that the player is to move: true when it is
   * legal in the view's position (a king two squares over may mean castling),
   * false when it is not and nothing was sent.
   */
  playQueued(uci) {
    const legal = this.view.legal;
    this.view.queued = null;
    if (!legal || !this.view.movable) { this.render(); return false; }
    const from = sq(uci.slice(0, 2)), to = sq(uci.slice(2, 4));
    const piece = this.view.board[from];
    if (!piece || piece.c !== this.view.movable) { this.render(); return false; }
    let candidates = legal.filter((m) => m.slice(0, 4) === uci.slice(0, 4));
    if (!candidates.length && piece.r === 'k') candidates = castleAlternatives(legal, from, to, this.view.board);
    if (!candidates.length) { this.render(); return false; }
    let move = candidates[0].slice(0, 4);
    if (candidates.some((m) => m.length === 5)) move += uci[4] || 'q';
    this.selected = -1;
    this.pending = { board: drawMove(this.view.board, move), last: [move.slice(0, 2), move.slice(2, 4)] };
    this.render();
    this.opts.onMove(move);
    return true;
  }

  /** The squares a selected piece may go to: from the server's legal moves, or none known. */
  targetsOf(i) {
    const out = new Set();
    if (i < 0 || !this.view.legal) return out;
    const from = name(i);
    for (const m of this.view.legal) if (m.startsWith(from)) out.add(sq(m.slice(2, 4)));
    return out;
  }

  select(i) {
    this.selected = i;
    this.render();
  }

  /** Picks the move from `from` to `to` (indices), asking for a promotion piece when needed. */
  async attempt(from, to) {
    const piece = this.view.board[from];
    const legal = this.view.legal;
    this.selected = -1;
    if (!piece || from === to) { this.render(); return; }
    let uci = name(from) + name(to);
    if (!this.view.movable && this.view.premove) {
      // Queued, not judged: it is checked against the legal moves when the turn comes.
      if (piece.r === 'p' && rankOf(to) === (piece.c === 'w' ? 7 : 0)) uci += 'q';
      this.render();
      if (this.opts.onPremove) this.opts.onPremove(uci);
      return;
    }
    if (legal && legal.length) {
      let candidates = legal.filter((m) => m.slice(0, 4) === uci);
      if (!candidates.length && piece.r === 'k') candidates = castleAlternatives(legal, from, to, this.view.board);
      if (!candidates.length) {
        this.render();
        this.opts.onRefused({ from: name(from), to: name(to), role: piece.r });
        return;
      }
      uci = candidates[0].slice(0, 4);
      if (candidates.some((m) => m.length === 5)) {
        const role = this.autoQueen() ? 'q' : await this.askPromotion(piece.c);
        if (!role) { this.render(); return; }
        uci += role;
      }
    } else if (piece.r === 'p' && rankOf(to) === (piece.c === 'w' ? 7 : 0)) {
      const role = this.autoQueen() ? 'q' : await this.askPromotion(piece.c);
      if (!role) { this.render(); return; }
      uci += role;
    }
    // Shown at once; the server's answer confirms it or puts the piece back.
    this.pending = { board: drawMove(this.view.board, uci), last: [uci.slice(0, 2), uci.slice(2, 4)] };
    this.render();
    this.opts.onMove(uci);
  }

  /** Whether a pawn reaching the last rank becomes a queen without asking. */
  autoQueen() { return !!(this.opts.autoQueen && this.opts.autoQueen()); }

  /** Puts back a move the server refused. */
  cancelPending() {
    this.pending = null;
    this.render();
  }

  askPromotion(color) {
    return new Promise((resolve) => {
      this.picker.textContent = '';
      const close = (role) => {
        this.picker.hidden = true;
        this.picker.textContent = '';
        document.removeEventListener('keydown', onKey, true);
        this.el.focus({ preventScroll: true });
        resolve(role);
      };
      const onKey = (e) => {
        if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); close(null); }
      };
      const label = { q: 'Queen', r: 'Rook', b: 'Bishop', n: 'Knight' };
      for (const role of ['q', 'r', 'b', 'n']) {
        const b = document.createElement('button');
        b.type = 'button';
        b.dataset.role = role;
        b.title = label[role];
        b.setAttribute('aria-label', `Promote to ${label[role].toLowerCase()}`);
        b.innerHTML = this.svg(color, role);
        b.addEventListener('click', () => close(role));
        this.picker.append(b);
      }
      const cancel = document.createElement('button');
      cancel.type = 'button';
      cancel.className = 'promotion-cancel';
      cancel.textContent = '✕';
      cancel.setAttribute('aria-label', 'Cancel the move');
      cancel.addEventListener('click', () => close(null));
      this.picker.append(cancel);
      this.picker.hidden = false;
      document.addEventListener('keydown', onKey, true);
      this.picker.querySelector('button').focus();
    });
  }

  // --- input ----------------------------------------------------------

  /** The square drawn under a point in the board's plane, whatever stands on it (-1: none). */
  squareAt(x, y) {
    this.el.classList.add('hit-squares');
    const hit = document.elementFromPoint(x, y);
    this.el.classList.remove('hit-squares');
    const el = hit && hit.closest('.square');
    return el && this.el.contains(el) ? sq(el.dataset.square) : -1;
  }

  /** The square of the piece drawn under a point (its painted shape), or -1. */
  pieceAt(x, y) {
    const hit = document.elementFromPoint(x, y);
    const el = hit && hit.closest('.piece') && hit.closest('.square');
    return el && this.el.contains(el) ? sq(el.dataset.square) : -1;
  }

  /**
   * What a point picks. In 3D a piece's picture stands over the squares
   * behind it, so a point may show a piece and lie on another square. The
   * piece in hand (`from`) is itself first: a click on it puts it down.
   * Then a place it may go: the piece drawn there (a capture), else the
   * square under it. Otherwise the piece drawn there, else the square.
   */
  pick(x, y, from = this.selected) {
    const piece = this.pieceAt(x, y);
    const square = this.squareAt(x, y);
    if (from >= 0 && piece === from) return from;
    if (from >= 0) {
      const targets = this.targetsOf(from);
      for (const i of [piece, square]) if (i >= 0 && i !== from && targets.has(i)) return i;
    }
    return piece >= 0 ? piece : square;
  }

  /** A click, tap or Enter on square `i`. */
  activate(i) {
    if (!this.canAct()) { this.refuseLocked(i); return; }
    if (this.cancelsPremove(i)) { this.select(-1); if (this.opts.onPremove) this.opts.onPremove(null); return; }
    if (this.selected >= 0 && this.selected !== i) {
      const targets = this.targetsOf(this.selected);
      const own = this.canPick(i);
      if (targets.has(i) || (!own && !this.view.legal)) { this.attempt(this.selected, i); return; }
      if (!own) {
        const piece = this.view.board[this.selected];
        if (this.view.legal) this.opts.onRefused({ from: name(this.selected), to: name(i), role: piece ? piece.r : '' });
        this.select(-1);
        return;
      }
    }
    if (this.selected === i) { this.select(-1); return; }
    if (this.canPick(i)) this.select(i);
    else if (this.selected < 0 && this.visiblePiece(i) && this.view.seat && this.view.board[i].c !== this.view.seat) {
      this.opts.onRefused({ reason: 'not_your_piece', from: name(i) });
    }
  }

  /** A visible piece on square `i`, or null. */
  visiblePiece(i) {
    const p = this.view.board[i];
    return p && !(this.view.fog && this.view.fog.has(name(i))) ? p : null;
  }

  /** Square `i` touched while no piece may move: says why, if it is one of the player's pieces. */
  refuseLocked(i) {
    const p = this.visiblePiece(i);
    const reason = this.pending ? 'pending' : this.view.lock;
    if (p && reason && p.c === this.view.seat) this.opts.onRefused({ reason, from: name(i) });
  }

  bind() {
    const el = this.el;
    el.addEventListener('pointerdown', (e) => {
      // The keyboard cursor's outline shows while the keys drive the board, not after a click.
      el.dataset.input = 'pointer';
      if (e.button === 2 && e.pointerType === 'mouse') { this.drawFrom = this.squareAt(e.clientX, e.clientY); return; }
      if (e.button !== 0 && e.pointerType === 'mouse') return;
      this.annotations.clear();
      const i = this.pick(e.clientX, e.clientY);
      if (i < 0) return;
      this.cursor = i;
      if (!this.canAct()) { this.render(); this.refuseLocked(i); return; }
      if (this.cancelsPremove(i)) {
        e.preventDefault();
        this.select(-1);
        if (this.opts.onPremove) this.opts.onPremove(null);
        return;
      }
      const wasSelected = this.selected === i;
      const targets = this.targetsOf(this.selected);
      if (this.selected >= 0 && !wasSelected && (targets.has(i) || (!this.canPick(i) && !this.view.legal))) {
        e.preventDefault();
        if (e.pointerType !== 'mouse' && targets.has(i) && this.blastMarks(this.selected, i)) {
          // Nothing hovers on a touch screen: a finger held on a capture
          // shows its blast, lifting it plays the capture, sliding it off
          // the board puts the capture off.
          this.aim = { from: this.selected, id: e.pointerId };
          this.hover = i;
          this.render();
          try { el.setPointerCapture(e.pointerId); } catch { /* synthetic events */ }
          return;
        }
        this.attempt(this.selected, i);
        return;
      }
      if (this.canPick(i)) {
        e.preventDefault();
        el.focus({ preventScroll: true });
        this.selected = i;
        this.render();
        this.drag = { from: i, id: e.pointerId, x: e.clientX, y: e.clientY, moving: false, wasSelected, ghost: null };
        try { el.setPointerCapture(e.pointerId); } catch { /* synthetic events */ }
      } else {
        this.activate(i);
      }
    });
    el.addEventListener('pointermove', (e) => {
      // What the pointer is over matters only with a piece in hand (the
      // blast preview, the drop target): the hit tests wait until then.
      const from = this.drag ? this.drag.from : this.selected;
      const over = from >= 0 ? this.pick(e.clientX, e.clientY, from) : -1;
      if (e.pointerType === 'mouse' || this.drag || this.aim) {
        el.dataset.input = 'pointer';
        this.pointAt(over);
      }
      const d = this.drag;
      if (!d || d.id !== e.pointerId) return;
      if (!d.moving && Math.hypot(e.clientX - d.x, e.clientY - d.y) > DRAG_THRESHOLD) {
        d.moving = true;
        const source = this.squares[d.from];
        const rect = source.getBoundingClientRect();
        const ghost = document.createElement('div');
        ghost.className = `piece drag-ghost ${this.mode === '3d' ? 'ghost-3d' : ''}`;
        ghost.innerHTML = this.svg(this.view.board[d.from].c, this.view.board[d.from].r);
        ghost.style.width = `${rect.width}px`;
        ghost.style.height = `${rect.width}px`;
        document.body.append(ghost);
        d.ghost = ghost;
        d.size = rect.width;
        source.classList.add('drag-source');
      }
      if (d.moving) {
        d.ghost.style.transform = `translate(${e.clientX - d.size / 2}px, ${e.clientY - d.size / 2}px)`;
        for (const s of this.el.querySelectorAll('.drag-over')) s.classList.remove('drag-over');
        if (over >= 0) this.squares[over].classList.add('drag-over');
      }
    });
    const finish = (e, cancelled) => {
      const a = this.aim;
      if (a && a.id === e.pointerId) {
        this.aim = null;
        const to = cancelled ? -1 : this.pick(e.clientX, e.clientY, a.from);
        this.hover = -1;
        if (to >= 0 && to !== a.from && this.targetsOf(a.from).has(to)) this.attempt(a.from, to);
        else this.render();
        return;
      }
      const d = this.drag;
      if (!d || d.id !== e.pointerId) return;
      this.drag = null;
      if (d.ghost) d.ghost.remove();
      this.squares[d.from].classList.remove('drag-source');
      for (const s of this.el.querySelectorAll('.drag-over')) s.classList.remove('drag-over');
      if (cancelled) { this.select(-1); return; }
      if (d.moving) {
        const to = this.pick(e.clientX, e.clientY, d.from);
        if (to >= 0 && to !== d.from) {
          this.dropped = name(d.from) + name(to);
          this.attempt(d.from, to);
        }
        else this.render();
      } else if (d.wasSelected) {
        this.select(-1);
      }
    };
    el.addEventListener('pointerleave', () => { if (!this.drag) this.pointAt(-1); });
    el.addEventListener('pointerup', (e) => finish(e, false));
    el.addEventListener('pointercancel', (e) => finish(e, true));
    el.addEventListener('lostpointercapture', (e) => { if (this.drag && this.drag.id === e.pointerId && !this.drag.moving) this.drag = null; });
    el.addEventListener('contextmenu', (e) => e.preventDefault());
    // A right-drag draws: an arrow between two squares, a circle on one.
    el.addEventListener('pointerup', (e) => {
      if (e.button !== 2 || e.pointerType !== 'mouse' || this.drawFrom == null) return;
      const from = this.drawFrom;
      this.drawFrom = null;
      const to = this.squareAt(e.clientX, e.clientY);
      if (from >= 0 && to >= 0) this.annotations.toggle(from, to, brushOf(e));
    });
    el.addEventListener('keydown', (e) => this.key(e));
  }

  key(e) {
    this.el.dataset.input = 'keyboard';
    if (this.opts.onKey && this.opts.onKey(e)) { e.preventDefault(); return; }
    const white = this.orientation === 'white';
    const moves = {
      ArrowUp: [0, white ? 1 : -1], ArrowDown: [0, white ? -1 : 1],
      ArrowLeft: [white ? -1 : 1, 0], ArrowRight: [white ? 1 : -1, 0],
    };
    if (moves[e.key]) {
      const [df, dr] = moves[e.key];
      const f = Math.min(7, Math.max(0, fileOf(this.cursor) + df));
      const r = Math.min(7, Math.max(0, rankOf(this.cursor) + dr));
      this.cursor = r * 8 + f;
      e.preventDefault();
      this.render();
      this.squares[this.cursor].scrollIntoView?.({ block: 'nearest', inline: 'nearest' });
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.activate(this.cursor);
    } else if (e.key === 'Escape') {
      this.select(-1);
    }
  }

  /** Puts the keyboard cursor on a sensible square: a piece of the side that may move. */
  placeCursor() {
    const mine = this.view.movable;
    if (mine) {
      const king = this.view.board.findIndex((p) => p && p.c === mine && p.r === 'k');
      if (king >= 0) { this.cursor = king; this.render(); }
    }
  }

  /** Fire and smoke over the squares an explosion cleared. */
  explode(squares) {
    if (!squares || !squares.length) return;
    const center = squares[0];
    for (const n of squares) {
      const el = this.squares[sq(n)];
      if (!el) continue;
      const boom = document.createElement('div');
      boom.className = `explosion${n === center ? ' explosion-center' : ''}`;
      for (let k = 0; k < 8; k++) {
        const spark = document.createElement('span');
        spark.style.setProperty('--angle', `${k * 45 + Math.round(Math.random() * 30)}deg`);
        boom.append(spark);
      }
      el.append(boom);
      setTimeout(() => boom.remove(), 1000);
    }
    this.el.classList.remove('shake');
    void this.el.offsetWidth;
    this.el.classList.add('shake');
    setTimeout(() => this.el.classList.remove('shake'), 500);
  }
}

/**
 * A coordinate: drawn from an attribute (art/themes.css), so the square's
 * accessible name ("e4, white pawn") is the whole of what it says.
 */
function coord(className, text) {
  const s = document.createElement('span');
  s.className = className;
  s.dataset.coord = text;
  s.setAttribute('aria-hidden', 'true');
  return s;
}

/**
 * How the `n`th square on screen (1-based, in reading order) varies the
 * theme's texture and the fog's drift, so that neither shows a repeated
 * tile (art/themes.css, `data-tex`, `data-drift`, `data-swirl`).
 */
function looksOf(n) {
  let tex = 0;
  if (n % 3 === 1) tex = 1;
  if (n % 5 === 2) tex = 2;
  if (n % 7 === 3) tex = 3;
  let drift = 0;
  if (n % 2 === 0) drift = 1;
  if (n % 3 === 0) drift = 2;
  if (n % 5 === 1) drift = 3;
  return { tex: String(tex), drift: String(drift), swirl: n % 7 === 2 ? '1' : '0' };
}

const ROLE_NAMES = { p: 'pawn', n: 'knight', b: 'bishop', r: 'rook', q: 'queen', k: 'king' };

function describeSquare(n, p, fogged) {
  if (fogged) return `${n}, fog`;
  if (!p) return n;
  return `${n}, ${p.c === 'w' ? 'white' : 'black'} ${ROLE_NAMES[p.r]}`;
}

/** The legal castling move meant by a king dropped on its own rook, or two squares over. */
function castleAlternatives(legal, from, to, board) {
  if (rankOf(from) !== rankOf(to)) return [];
  const kingside = fileOf(to) > fileOf(from);
  const target = board[to];
  const king = board[from];
  const ontoRook = target && king && target.c === king.c && target.r === 'r';
  if (!ontoRook && Math.abs(fileOf(to) - fileOf(from)) < 2) return [];
  return legal.filter((m) => {
    if (m.slice(0, 2) !== name(from)) return false;
    const t = sq(m.slice(2, 4));
    if (rankOf(t) !== rankOf(from) || (fileOf(t) > fileOf(from)) !== kingside) return false;
    const onto = board[t];
    return Math.abs(fileOf(t) - fileOf(from)) >= 2 || (onto && onto.c === king.c && onto.r === 'r');
  });
}
