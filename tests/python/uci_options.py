"""`fogblast uci` under python-chess, the library lichess-bot drives its
engines through: python-chess refuses to set an option the engine did not
declare, or a spin value outside the declared range, so this configures
exactly the uci_options of lichess-bot's default configuration and plays
atomic moves with pondering on, as lichess-bot does with `ponder: true`.

The opponent alternately plays the reply the engine expected (python-chess
then sends `ponderhit`) and another move (it sends `stop` and a new search).
Any error, or any warning python-chess logs about the engine's output,
exits non-zero. The last line printed is a JSON summary.

Usage: uci_options.py <engine command>...  (e.g. `fogblast uci`)
"""

import json
import logging
import sys

import chess
import chess.engine
import chess.variant

# lichess-bot's default config.yml: engine.uci_options.
LICHESS_BOT_UCI_OPTIONS = {
    "Move Overhead": 100,
    "Threads": 4,
    "Hash": 512,
    "SyzygyPath": "./syzygy/",
    "UCI_ShowWDL": True,
}
ENGINE_MOVES = 10


class Warnings(logging.Handler):
    """Keeps python-chess's warnings (unexpected engine output and the like)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = []

    def emit(self, record):
        self.seen.append(record.getMessage())


def opponent_move(board, expected, follow):
    """The reply the engine expected when `follow`, else another legal move."""
    legal = list(board.legal_moves)
    if follow and expected in legal:
        return expected, True
    others = [m for m in legal if m != expected]
    return (others or legal)[0], False


def play(engine):
    summary = {"engine_moves": 0, "ponder_moves": 0, "followed": 0, "not_followed": 0, "wdl_lines": 0, "games": 0}
    board = None
    while summary["engine_moves"] < ENGINE_MOVES:
        if board is None or board.is_game_over():
            board = chess.variant.AtomicBoard()
            summary["games"] += 1
        # A game's first move is searched to a depth, so that its bestmove
        # surely names a reply to ponder on (a search cut short by its time
        # may not have one): the reply is played, and python-chess sends
        # `ponderhit`.
        first = len(board.move_stack) == 0
        limit = chess.engine.Limit(depth=3) if first else chess.engine.Limit(time=0.05)
        result = engine.play(board, limit, ponder=True, info=chess.engine.INFO_SCORE, game=summary["games"])
        if result.move is None or result.move not in board.legal_moves:
            raise RuntimeError(f"no legal move in {board.fen()}: {result}")
        wdl = result.info.get("wdl")
        if wdl is not None:
            if wdl.relative.total() != 1000:
                raise RuntimeError(f"wdl does not sum to 1000: {wdl}")
            summary["wdl_lines"] += 1
        summary["engine_moves"] += 1
        summary["ponder_moves"] += result.ponder is not None
        board.push(result.move)
        if board.is_game_over():
            continue
        reply, followed = opponent_move(board, result.ponder, first or summary["engine_moves"] % 2 == 1)
        summary["followed" if followed else "not_followed"] += 1
        board.push(reply)
    return summary


def main():
    command = sys.argv[1:]
    if not command:
        sys.exit(__doc__)
    warnings = Warnings()
    logging.getLogger("chess.engine").addHandler(warnings)
    engine = chess.engine.SimpleEngine.popen_uci(command, timeout=60)
    try:
        engine.configure(LICHESS_BOT_UCI_OPTIONS)
        summary = play(engine)
        summary["name"] = engine.id.get("name")
        summary["options"] = sorted(engine.options)
    finally:
        engine.quit()
    if warnings.seen:
        raise RuntimeError(f"python-chess warned: {warnings.seen}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
