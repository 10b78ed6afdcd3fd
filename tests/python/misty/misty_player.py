"""misty as an outside player for `fogblast-tools fog-match`.

Reads one JSON command a line on stdin and answers each with one JSON line
on stdout. It is told only what its own side sees, as misty's observation
(visible squares, the pieces on them, the square where it lost a piece and
whether the taker stands there); the referee is the Rust side.

  {"cmd": "new", "color": "white", "seed": 3, "time": 1.0}   -> {"ok": true}
  {"cmd": "observe", "own_move": "e2e4" | null, "visible": "<u64>",
   "pieces": [[square, "P", "white"], ...],
   "own_capture": square | null, "opp_landing": square | null} -> {"ok": true}
  {"cmd": "go", "legal": ["e2e4", ...]}                       -> {"move": "e2e4"}
  {"cmd": "verify", "moves": ["e2e4", ...]}  -> {"plies": n, "mismatches": m}
  {"cmd": "quit"}

`verify`, sent after a game, replays the whole game with python-chess and
misty's own observation function and counts the plies whose observation
differs from the one this side was given (up to the ply that takes a king): the check that the referee told
misty exactly what misty's rules say it sees.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import time
import traceback

import chess
from fow_chess import EngineV2Strategy, Observation, observation_from_transition, visible_squares
from fow_chess.selfplay import PerspectiveView

ROLES = {"P": chess.PAWN, "N": chess.KNIGHT, "B": chess.BISHOP, "R": chess.ROOK, "Q": chess.QUEEN, "K": chess.KING}


# Debian installs Stockfish as /usr/games/stockfish, off most PATHs.
if shutil.which("stockfish") is None and "FOW_STOCKFISH" not in os.environ and os.path.exists("/usr/games/stockfish"):
    os.environ["FOW_STOCKFISH"] = "/usr/games/stockfish"


class Player:
    def __init__(self) -> None:
        self.strategy: EngineV2Strategy | None = None
        self.color = chess.WHITE
        self.given: list[tuple[str | None, Observation]] = []

    def new(self, msg: dict) -> dict:
        if self.strategy is not None:
            self.strategy.close()
        self.color = chess.WHITE if msg["color"] == "white" else chess.BLACK
        # misty as packaged: its defaults and a fixed time a move. The PyPI
        # package ships without its Rust extension (fow_rust), so its search
        # tree and belief run in Python, as its own fallback does.
        native = importlib.util.find_spec("fow_rust") is not None
        self.strategy = EngineV2Strategy(
            seed=int(msg["seed"]),
            time_budget_seconds=float(msg["time"]),
            use_rust_state=native,
            use_rust_tree=native,
        )
        self.strategy.reset(self.color)
        self.given = []
        return {"ok": True}

    def observe(self, msg: dict) -> dict:
        pieces = {
            int(sq): chess.Piece(ROLES[role], color == "white") for sq, role, color in msg["pieces"]
        }
        obs = Observation(
            visibility_mask=chess.SquareSet(int(msg["visible"])),
            visible_pieces=pieces,
            own_capture_square=msg.get("own_capture"),
            opp_capture_landing_square=msg.get("opp_landing"),
        )
        own = msg.get("own_move")
        self.given.append((own, obs))
        if own is not None:
            self.strategy.observe_own_move(chess.Move.from_uci(own), obs)
        else:
            self.strategy.observe_opp_move(obs)
        return {"ok": True}

    def go(self, msg: dict) -> dict:
        _, last = self.given[-1] if self.given else (None, None)
        legal = [chess.Move.from_uci(u) for u in msg["legal"]]
        if last is None:
            start = chess.Board()
            visible = visible_squares(start, self.color)
            piece_map = {sq: p for sq, p in start.piece_map().items() if sq in visible}
        else:
            visible, piece_map = last.visibility_mask, dict(last.visible_pieces)
        view = PerspectiveView(
            perspective=self.color, own_legal_moves=legal, visible_squares=visible, visible_piece_map=piece_map
        )
        started = time.monotonic()
        move = self.strategy.pick_move(view)
        return {"move": move.uci(), "seconds": round(time.monotonic() - started, 3)}

    def verify(self, msg: dict) -> dict:
        board = chess.Board()
        mismatches = 0
        plies = 0
        given = iter(self.given)
        for uci in msg["moves"]:
            before = board.copy(stack=False)
            mover = board.turn
            board.push(chess.Move.from_uci(uci))
            own, obs = next(given, (None, None))
            if obs is None or board.king(chess.WHITE) is None or board.king(chess.BLACK) is None:
                # Once a king is taken the game is over: what is seen then
                # differs by design (Fogblast shows only one's own pieces).
                break
            plies += 1
            truth = observation_from_transition(before, board, self.color)
            same = (
                truth.visibility_mask == obs.visibility_mask
                and truth.visible_pieces == obs.visible_pieces
                and truth.own_capture_square == obs.own_capture_square
                and truth.opp_capture_landing_square == obs.opp_capture_landing_square
                and (own == uci) == (mover == self.color)
            )
            if not same:
                mismatches += 1
                print(f"misty_player: ply {plies} ({uci}) observation differs", file=sys.stderr)
        return {"plies": plies, "mismatches": mismatches}


def main() -> None:
    # Replies go to the real stdout; anything misty prints goes to stderr.
    out = sys.stdout
    sys.stdout = sys.stderr
    player = Player()
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        cmd = msg["cmd"]
        if cmd == "quit":
            break
        try:
            reply = getattr(player, cmd)(msg)
        except Exception as err:  # reported to the referee, which stops the match
            traceback.print_exc(file=sys.stderr)
            reply = {"error": f"{type(err).__name__}: {err}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    if player.strategy is not None:
        player.strategy.close()


if __name__ == "__main__":
    main()
