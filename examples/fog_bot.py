"""A fog-of-war bot for Fogblast's Bot API, playing from what it sees alone.

In fog of war a bot never gets the whole board: each `gameState` carries its
own view (docs/bots.md, "The fog view"). This bot turns that view into an
`Observation` and asks `choose_move` for a move; replace `choose_move` with
your own strategy. It needs only `requests`.

    python3 fog_bot.py --url http://127.0.0.1:8080 --play-computer 1
        plays one game of fog of war against the computer at level 1
    python3 fog_bot.py --url http://127.0.0.1:8080 --token TOKEN
        accepts fog-of-war challenges and plays them until stopped

Without `--token` it asks the server for a new player. At the end of each
game it prints one JSON line: the game, its result and how many plies it
played.
"""

import argparse
import json
import random
import sys
import threading
from dataclasses import dataclass, field

import requests

PIECE_VALUES = {"p": 1, "n": 3, "b": 3, "r": 5, "q": 9, "k": 100}


@dataclass
class Observation:
    """What the bot knows on its turn."""

    color: str                   # "white" or "black"
    board: dict                  # square -> piece letter (upper case white), only what it sees
    visible: set                 # the squares it sees
    legal: list                  # its legal moves, in UCI
    moves: list                  # every move so far; "????" where it may not know the move
    my_time_ms: int = 0
    history: list = field(default_factory=list)  # earlier observations of this game, oldest first

    def mine(self, square):
        piece = self.board.get(square)
        return piece is not None and piece.isupper() == (self.color == "white")

    def theirs(self, square):
        piece = self.board.get(square)
        return piece is not None and not self.mine(square)


def board_of(fen):
    """The pieces of a FEN's board, by square (fogged squares are empty)."""
    board = {}
    for rank_index, rank in enumerate(fen.split()[0].split("/")):
        file = 0
        for char in rank:
            if char.isdigit():
                file += int(char)
            else:
                board[f"{'abcdefgh'[file]}{8 - rank_index}"] = char
                file += 1
    return board


def choose_move(observation: Observation) -> str:
    """The move to play. This one takes a king it sees, else the most
    valuable piece it can take, else moves at random. Replace it."""
    best, best_value = None, 0
    for uci in observation.legal:
        target = observation.board.get(uci[2:4])
        if target and observation.theirs(uci[2:4]):
            value = PIECE_VALUES[target.lower()]
            if value > best_value:
                best, best_value = uci, value
    return best or random.choice(observation.legal)


class Bot:
    def __init__(self, url, token):
        self.url = url.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"
        self.me = self.get("/api/account")["id"]

    def get(self, path):
        answer = self.session.get(self.url + path, timeout=30)
        answer.raise_for_status()
        return answer.json()

    def post(self, path, data=None):
        answer = self.session.post(self.url + path, data=data, timeout=30)
        if answer.status_code >= 400:
            return answer.json().get("error", answer.text)
        return None

    def stream(self, path):
        with self.session.get(self.url + path, stream=True, timeout=(30, 60)) as answer:
            answer.raise_for_status()
            for line in answer.iter_lines():
                if line:
                    yield json.loads(line)

    def play(self, game):
        """Plays `game` to its end; returns its last state."""
        color, history, state = None, [], None
        for event in self.stream(f"/api/bot/game/stream/{game}"):
            if event["type"] == "gameFull":
                color = "white" if event["white"].get("id") == self.me else "black"
                state = event["state"]
            elif event["type"] == "gameState":
                state = event
            else:
                continue
            if state["status"] != "started":
                return state
            if not state.get("legal"):
                continue  # not this bot's turn
            observation = Observation(
                color=color,
                board=board_of(state["fen"]),
                visible=set(state.get("visible", [])),
                legal=state["legal"],
                moves=state["moves"].split(),
                my_time_ms=state["wtime" if color == "white" else "btime"],
                history=list(history),
            )
            history.append(observation)
            refused = self.post(f"/api/bot/game/{game}/move/{choose_move(observation)}")
            if refused:
                print(f"move refused: {refused}", file=sys.stderr)
        return state

    def finish(self, game):
        state = self.play(game)
        plies = len(state["moves"].split()) if state and state["moves"] else 0
        print(json.dumps({"game": game, "status": state and state["status"],
                          "winner": state and state.get("winner"), "plies": plies}), flush=True)

    def play_computer(self, level):
        answer = self.session.post(self.url + "/api/challenge/ai",
                                   data={"level": level, "variant": "fogOfWar", "color": "random"}, timeout=30)
        answer.raise_for_status()
        self.finish(answer.json()["id"])

    def serve(self):
        """Accepts fog-of-war challenges and plays each game on a thread."""
        for event in self.stream("/api/stream/event"):
            if event["type"] == "challenge" and event["challenge"]["direction"] == "in":
                challenge = event["challenge"]
                if challenge["variant"]["key"] == "fogOfWar":
                    self.post(f"/api/challenge/{challenge['id']}/accept")
                else:
                    self.post(f"/api/challenge/{challenge['id']}/decline", {"reason": "variant"})
            elif event["type"] == "gameStart":
                threading.Thread(target=self.finish, args=(event["game"]["gameId"],), daemon=True).start()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--token", help="the bot's token; a new player when left out")
    parser.add_argument("--play-computer", type=int, metavar="LEVEL", help="play one game against the computer")
    args = parser.parse_args()
    token = args.token
    if token is None:
        answer = requests.post(args.url.rstrip("/") + "/api/token", timeout=30)
        answer.raise_for_status()
        token = answer.json()["access_token"]
    bot = Bot(args.url, token)
    if args.play_computer:
        bot.play_computer(args.play_computer)
    else:
        bot.serve()


if __name__ == "__main__":
    main()
