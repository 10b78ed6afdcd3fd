"""Bots built on berserk (the lichess client library) playing on Fogblast
through its lichess-compatible Bot and Board API, for tests/e2e/bots.rs.

    play.py duel URL [OTHER_URL] [--no-seek]
                       two bots challenge each other; one declines a
                       challenge, then they play an atomic game to its end
    play.py late URL   a bot challenged before its event stream opens
                       accepts; its stream reopened mid-game tells the
                       game again; chat, user status and token test
    play.py arena URL  four bots play a one-minute atomic arena; the
                       standings and the archived games at the end
    play.py swiss URL  five bots play a three-round atomic Swiss, one of
                       them joining late; the rounds, results, TRF and
                       PGN exports and the archived games at the end
    play.py fog URL    a bot plays the computer in fog of war to the end,
                       checking every state against what it may see

Each prints one JSON line of what it saw; the test checks it.
"""

import json
import random
import sys
import threading
import time

import berserk
import requests

MAX_PLIES = 400


def token(url):
    answer = requests.post(f"{url}/api/token", timeout=10)
    answer.raise_for_status()
    return answer.json()["access_token"]


def client(url, tok):
    return berserk.Client(session=berserk.TokenSession(tok), base_url=url)


class Bot:
    """Listens to its event stream: accepts challenges it is told to,
    plays every game it starts with random legal moves."""

    def __init__(self, url, accept=True):
        self.url = url
        self.client = client(url, token(url))
        self.id = self.client.account.get()["id"]
        self.accept = accept
        self.events = []
        self.games = {}
        self.finished = threading.Event()
        self.lock = threading.Lock()
        threading.Thread(target=self.listen, daemon=True).start()

    def listen(self):
        for event in self.client.bots.stream_incoming_events():
            with self.lock:
                self.events.append(event)
            if event["type"] == "challenge" and event["challenge"]["direction"] == "in":
                if self.accept:
                    self.client.bots.accept_challenge(event["challenge"]["id"])
                else:
                    self.client.bots.decline_challenge(event["challenge"]["id"], reason="later")
            elif event["type"] == "gameStart":
                game = event["game"]["gameId"]
                threading.Thread(target=self.play, args=(game, event["game"]["color"]), daemon=True).start()

    def play(self, game, color):
        states = []
        full = None
        for line in self.client.bots.stream_game_state(game):
            if line["type"] == "gameFull":
                full = line
                state = line["state"]
            elif line["type"] == "gameState":
                state = line
            else:
                continue
            states.append(state)
            if state["status"] != "started":
                break
            if state["legal"]:
                plies = len(state["moves"].split()) if state["moves"] else 0
                if plies >= MAX_PLIES:
                    self.client.bots.resign_game(game)
                else:
                    self.client.bots.make_move(game, random.choice(state["legal"]))
        with self.lock:
            self.games[game] = {"color": color, "full": full, "states": states}
        self.finished.set()

    def wait_for(self, predicate, limit=60):
        deadline = time.time() + limit
        while time.time() < deadline:
            with self.lock:
                found = [e for e in self.events if predicate(e)]
            if found:
                return found[0]
            time.sleep(0.05)
        raise SystemExit(f"{self.id} waited {limit}s in vain; saw {self.events}")


def status_of(call):
    try:
        call()
    except berserk.exceptions.ResponseError as error:
        return error.status_code, error.cause
    return 200, None


def duel(url, other_url=None, seek=True):
    alice = Bot(url)
    bob = Bot(other_url or url, accept=False)
    carol = Bot(other_url or url)
    time.sleep(0.5)  # the event streams are open
    # Bob declines.
    declined = alice.client.challenges.create(bob.id, rated=False, variant="atomic")
    alice.wait_for(lambda e: e["type"] == "challengeDeclined" and e["challenge"]["id"] == declined["id"])
    # Carol accepts, and the game is played out.
    challenge = alice.client.challenges.create(carol.id, rated=False, variant="atomic", clock_limit=300, clock_increment=2)
    start_alice = alice.wait_for(lambda e: e["type"] == "gameStart")
    start_carol = carol.wait_for(lambda e: e["type"] == "gameStart")
    game = start_alice["game"]["gameId"]
    finish = alice.wait_for(lambda e: e["type"] == "gameFinish" and e["game"]["gameId"] == game, limit=240)
    carol.wait_for(lambda e: e["type"] == "gameFinish" and e["game"]["gameId"] == game, limit=30)
    deadline = time.time() + 30
    while time.time() < deadline and not (game in alice.games and game in carol.games):
        time.sleep(0.05)
    mine = alice.games[game]
    # Refusals, as lichess answers them.
    illegal = status_of(lambda: alice.client.bots.make_move(game, "e1e8"))
    forged = status_of(lambda: client(url, "v2.forged.token").account.get())
    # Both seek: the matchmaker pairs them, and the seeks' answers end.
    seeks, paired = [], []
    if seek:
        seeks = [threading.Thread(target=lambda b=b: b.client.board.seek(3, 2, variant="atomic")) for b in (alice, carol)]
        for thread in seeks:
            thread.start()
        paired = [b.wait_for(lambda e: e["type"] == "gameStart" and e["game"]["source"] == "lobby") for b in (alice, carol)]
        for thread in seeks:
            thread.join(30)
    out_challenge = [e for e in alice.events if e["type"] == "challenge" and e["challenge"]["id"] == challenge["id"]]
    in_challenge = [e for e in carol.events if e["type"] == "challenge" and e["challenge"]["id"] == challenge["id"]]
    print(json.dumps({
        "game": game,
        "carol_game": start_carol["game"]["gameId"],
        "colors": sorted([start_alice["game"]["color"], start_carol["game"]["color"]]),
        "challenge_variant": challenge["variant"]["key"],
        "out_direction": out_challenge[0]["challenge"]["direction"] if out_challenge else None,
        "in_direction": in_challenge[0]["challenge"]["direction"] if in_challenge else None,
        "full_variant": mine["full"]["variant"]["key"],
        "full_clock": mine["full"]["clock"],
        "final_status": mine["states"][-1]["status"],
        "final_winner": mine["states"][-1].get("winner"),
        "finish_status": finish["game"]["status"]["name"],
        "plies": len(mine["states"][-1]["moves"].split()),
        "illegal_status": illegal[0],
        "illegal_error": (illegal[1] or {}).get("error") if isinstance(illegal[1], dict) else illegal[1],
        "forged_status": forged[0],
        "paired_games": [p["game"]["gameId"] for p in paired],
        "seeks_open": [thread.is_alive() for thread in seeks],
    }))


def late(url):
    """A bot challenged before its event stream opens, then reconnecting
    mid-game: lichess tells both as the stream opens. Chat both ways."""
    alice = Bot(url)
    dave_token = token(url)
    dave_client = client(url, dave_token)
    dave_id = dave_client.account.get()["id"]
    time.sleep(0.3)
    challenge = alice.client.challenges.create(dave_id, rated=False, variant="atomic", clock_limit=300, clock_increment=2)
    # Dave opens his stream only now, and hears of the challenge.
    dave = LateBot(url, dave_token, dave_id)
    told = dave.wait_for(lambda e: e["type"] == "challenge" and e["challenge"]["id"] == challenge["id"])
    online = requests.get(f"{url}/api/users/status", params={"ids": f"{dave_id},nosuchplayer1"},
                          headers={"Authorization": f"Bearer {dave_token}"}, timeout=10).json()
    dave.client.bots.accept_challenge(challenge["id"])
    start = dave.wait_for(lambda e: e["type"] == "gameStart")
    game = start["game"]["gameId"]
    playing = [g["gameId"] for g in dave.client.games.get_ongoing()]
    dave.wait_for(lambda e: e["type"] == "following" and e["game"] == game)
    # Chat in the players' room and the spectators'.
    alice.client.bots.post_message(game, "good luck")
    alice.client.bots.post_message(game, "hello watchers", spectator=True)
    too_long = status_of(lambda: alice.client.bots.post_message(game, "x" * 141))
    # Dave's stream closes and opens again: the game in progress is told.
    dave.close()
    again = LateBot(url, dave_token, dave_id)
    resumed = again.wait_for(lambda e: e["type"] == "gameStart" and e["game"]["gameId"] == game)
    chat = dave.chat_of(game, limit=30, count=2)
    tested = requests.post(f"{url}/api/token/test", data=f"{dave_token},v2.forged", timeout=10).json()
    alice.client.bots.resign_game(game)
    finish = again.wait_for(lambda e: e["type"] == "gameFinish" and e["game"]["gameId"] == game)
    print(json.dumps({
        "told_direction": told["challenge"]["direction"],
        "online": {u["id"]: u["online"] for u in online},
        "game": game,
        "playing": playing,
        "resumed_color": resumed["game"]["color"],
        "chat": chat,
        "too_long_status": too_long[0],
        "token_test": {k[:8]: v for k, v in tested.items()},
        "dave": dave_id,
        "finish_status": finish["game"]["status"]["name"],
    }))


class LateBot:
    """An event stream opened by hand, which can be closed; games are
    followed for their chat only."""

    def __init__(self, url, tok, me):
        self.client = client(url, tok)
        self.me = me
        self.events = []
        self.chats = {}
        self.lock = threading.Lock()
        self.response = requests.get(f"{url}/api/stream/event", headers={"Authorization": f"Bearer {tok}"},
                                     stream=True, timeout=60)
        threading.Thread(target=self.listen, daemon=True).start()

    def listen(self):
        try:
            for line in self.response.iter_lines():
                if not line:
                    continue
                event = json.loads(line)
                with self.lock:
                    self.events.append(event)
                if event["type"] == "gameStart":
                    game = event["game"]["gameId"]
                    threading.Thread(target=self.follow, args=(game,), daemon=True).start()
        except (requests.RequestException, AttributeError):
            pass

    def follow(self, game):
        for line in self.client.bots.stream_game_state(game):
            if line["type"] == "gameFull":
                with self.lock:
                    self.events.append({"type": "following", "game": game})
            if line["type"] == "chatLine":
                with self.lock:
                    self.chats.setdefault(game, []).append({"room": line["room"], "text": line["text"]})

    def chat_of(self, game, limit, count):
        deadline = time.time() + limit
        while time.time() < deadline:
            with self.lock:
                lines = list(self.chats.get(game, []))
            if len(lines) >= count:
                return lines
            time.sleep(0.05)
        return lines

    def close(self):
        self.response.close()

    wait_for = Bot.wait_for
    id = property(lambda self: self.me)


class ArenaBot:
    """A bot in an arena: plays every game it is paired in with random
    legal moves, going berserk first when told to."""

    def __init__(self, url, berserk):
        self.url = url
        self.token = token(url)
        self.client = client(url, self.token)
        self.id = self.client.account.get()["id"]
        self.berserk = berserk
        self.games = []
        self.refusals = []
        self.lock = threading.Lock()
        threading.Thread(target=self.listen, daemon=True).start()

    def listen(self):
        for event in self.client.bots.stream_incoming_events():
            if event["type"] == "gameStart" and event["game"].get("source") in ("arena", "swiss"):
                game = event["game"]["gameId"]
                with self.lock:
                    if game in self.games:
                        continue
                    self.games.append(game)
                threading.Thread(target=self.play, args=(game,), daemon=True).start()

    def play(self, game):
        headers = {"Authorization": f"Bearer {self.token}"}
        if self.berserk:
            answer = requests.post(f"{self.url}/api/bot/game/{game}/berserk", headers=headers, timeout=30)
            if answer.status_code != 200:
                self.refusals.append(("berserk", answer.status_code, answer.text))
        for line in self.client.bots.stream_game_state(game):
            state = line["state"] if line["type"] == "gameFull" else line if line["type"] == "gameState" else None
            if state is None:
                continue
            if state["status"] != "started":
                return
            if state["legal"]:
                try:
                    self.client.bots.make_move(game, random.choice(state["legal"]))
                except berserk.exceptions.ResponseError:
                    pass  # the game moved on (a flag, the opponent's resignation)


def read(urls, path, **params):
    """A GET answered by the first of `urls` that answers: a gateway whose
    matchmaker was killed answers 503 for tournaments."""
    for url in urls:
        try:
            answer = requests.get(f"{url}{path}", params=params, timeout=10)
        except requests.RequestException:
            continue
        if answer.status_code == 200:
            return answer
    raise SystemExit(f"no gateway answered {path}")


def arena(url, other_url=None):
    """Four bots play a one-minute atomic arena through lichess's tournament
    API; at the end, the standings and every archived game. Reads go to
    `other_url` when `url` does not answer them."""
    urls = [url] + ([other_url] if other_url else [])
    bots = [ArenaBot(url, berserk=(i == 0)) for i in range(4)]
    time.sleep(0.5)
    created = bots[0].client.tournaments.create_arena(
        clockTime=1, clockIncrement=0, minutes=1, name="Test <b>arena</b>", wait_minutes=0,
        variant="atomic", rated=False, description="<script>alert(1)</script>",
    )
    tid = created["id"]
    for bot in bots:
        bot.client.tournaments.join_arena(tid)
    twice = status_of(lambda: bots[1].client.tournaments.join_arena(tid))
    deadline = time.time() + 300
    info = None
    while time.time() < deadline:
        info = read(urls, f"/api/tournament/{tid}").json()
        if info["isFinished"]:
            break
        time.sleep(2)
    results = [json.loads(line) for line in read(urls, f"/api/tournament/{tid}/results").text.splitlines() if line]
    listed = read(urls, "/api/tournament").json()
    late = status_of(lambda: client(urls[-1], bots[1].token).tournaments.join_arena(tid))
    # Every game of the arena from the archive, each player's list.
    archived = {}
    deadline = time.time() + 60
    played = {g for bot in bots for g in bot.games}
    while time.time() < deadline:
        for bot in bots:
            params = {"page_size": 100}
            for _ in range(20):
                page = read(urls, f"/api/players/{bot.id}/games", **params).json()
                for game in page["games"]:
                    if game.get("tournament") == tid:
                        archived[game["game"]] = game
                if not page.get("next_page_token") or page["next_page_token"] == params.get("page_token"):
                    break
                params["page_token"] = page["next_page_token"]
        if played <= set(archived):
            break
        time.sleep(2)
    print(json.dumps({
        "tournament": tid,
        "name": created["name"],
        "description": created["description"],
        "finished": info and info["isFinished"],
        "podium": [p["id"] for p in (info or {}).get("podium", [])],
        "results": results,
        "listed_finished": [t["id"] for t in listed["finished"]],
        "join_twice_status": twice[0],
        "join_late_status": late[0],
        "played": sorted(played),
        "archived": list(archived.values()),
        "refusals": [r for bot in bots for r in bot.refusals],
        "players": [bot.id for bot in bots],
    }))


def archived_games(urls, bots, tid, played):
    """Every game of tournament `tid` in the archive, by id, once all of
    `played` are there (or a minute has passed)."""
    archived = {}
    deadline = time.time() + 60
    while time.time() < deadline:
        for bot in bots:
            params = {"page_size": 100}
            for _ in range(20):
                page = read(urls, f"/api/players/{bot.id}/games", **params).json()
                for game in page["games"]:
                    if game.get("tournament") == tid:
                        archived[game["game"]] = game
                if not page.get("next_page_token") or page["next_page_token"] == params.get("page_token"):
                    break
                params["page_token"] = page["next_page_token"]
        if played <= set(archived):
            break
        time.sleep(2)
    return archived


def swiss(url, other_url=None):
    """Five bots play a three-round atomic Swiss through lichess's Swiss
    API (berserk's calls): four join before it starts, the fifth once
    round 1 is paired, so round 1 has no bye and rounds 2 and 3 have one.
    With `other_url`, everything after the start is read through whichever
    gateway answers (a matchmaker may be killed meanwhile)."""
    urls = [url] + ([other_url] if other_url else [])
    bots = [ArenaBot(url, berserk=False) for _ in range(5)]
    time.sleep(0.5)
    created = bots[0].client.tournaments.create_swiss(
        "any-team", clockLimit=60, clockIncrement=0, nbRounds=3, name="Test <b>swiss</b>",
        startsAt=int(time.time() * 1000) + 6000, roundInterval=2, variant="atomic", rated=False,
        description="<script>alert(1)</script>",
    )
    tid = created["id"]
    flood = status_of(lambda: bots[0].client.tournaments.create_swiss("any-team", clockLimit=60, clockIncrement=0, nbRounds=3))
    bad_rounds = status_of(lambda: bots[1].client.tournaments.create_swiss("any-team", clockLimit=60, clockIncrement=0, nbRounds=1))
    unknown = status_of(lambda: bots[1].client.tournaments.join_swiss("nosuchswiss"))
    for bot in bots[:4]:
        bot.client.tournaments.join_swiss(tid)
    twice = status_of(lambda: bots[1].client.tournaments.join_swiss(tid))
    # Withdrawn before the start and back again: in round 1 all the same.
    bots[3].client.tournaments.withdraw_swiss(tid)
    bots[3].client.tournaments.join_swiss(tid)

    def info_now():
        if other_url is None:
            return bots[0].client.tournaments.get_swiss(tid)
        return read(urls, f"/api/swiss/{tid}").json()

    deadline = time.time() + 60
    while time.time() < deadline and info_now()["round"] < 1:
        time.sleep(0.5)
    for gateway in urls:
        if status_of(lambda: client(gateway, bots[4].token).tournaments.join_swiss(tid))[0] == 200:
            break
    deadline = time.time() + 400
    info = None
    while time.time() < deadline:
        info = info_now()
        if info["status"] == "finished":
            break
        time.sleep(2)
    if other_url is None:
        results = list(bots[0].client.tournaments.stream_swiss_results(tid))
        trf = bots[0].client.tournaments.export_swiss_trf(tid)
        pgn = "".join(bots[0].client.tournaments.export_swiss_games(tid, as_pgn=True))
    else:
        results = [json.loads(line) for line in read(urls, f"/api/swiss/{tid}/results").text.splitlines() if line]
        trf = read(urls, f"/swiss/{tid}.trf").text
        pgn = read(urls, f"/api/swiss/{tid}/games").text
    late = status_of(lambda: client(urls[-1], bots[1].token).tournaments.join_swiss(tid))
    played = {g for bot in bots for g in bot.games}
    archived = archived_games(urls, bots, tid, played)
    print(json.dumps({
        "tournament": tid,
        "name": created["name"],
        "description": created["description"],
        "info": info,
        "results": results,
        "trf": trf,
        "pgn": pgn,
        "join_twice_status": twice[0],
        "join_late_status": late[0],
        "join_unknown_status": unknown[0],
        "flood_status": flood[0],
        "bad_rounds_status": bad_rounds[0],
        "played": sorted(played),
        "archived": list(archived.values()),
        "players": [bot.id for bot in bots],
    }, default=str))


def fog(url):
    bot = Bot(url)
    time.sleep(0.3)
    created = bot.client.challenges.create_ai(level=1, variant="fogOfWar", color="white")
    game = created["id"]
    bot.wait_for(lambda e: e["type"] == "gameStart" and e["game"]["gameId"] == game)
    bot.wait_for(lambda e: e["type"] == "gameFinish" and e["game"]["gameId"] == game, limit=240)
    deadline = time.time() + 30
    while time.time() < deadline and game not in bot.games:
        time.sleep(0.05)
    played = bot.games[game]
    seen_hidden = 0
    leaks = []
    for state in played["states"]:
        moves = state["moves"].split() if state["moves"] else []
        if state["status"] == "started":
            seen_hidden += sum(1 for m in moves if m == "????")
            # Every black piece on the bot's board stands on a square it sees.
            visible = set(state.get("visible", []))
            for square, piece in pieces(state["fen"]):
                if piece.islower() and square not in visible:
                    leaks.append((square, piece, state["fen"]))
            if any(m != "????" for m in moves[1::2]):
                leaks.append(("a black move in the clear", state["moves"]))
    print(json.dumps({
        "game": game,
        "variant": played["full"]["variant"]["key"],
        "opponent_ai": played["full"]["black"].get("aiLevel"),
        "states": len(played["states"]),
        "hidden_moves_seen": seen_hidden,
        "leaks": leaks,
        "final_status": played["states"][-1]["status"],
        "final_moves_hidden": played["states"][-1]["moves"].count("????"),
    }))


def pieces(fen):
    board = fen.split()[0]
    for rank_index, rank in enumerate(board.split("/")):
        file = 0
        for char in rank:
            if char.isdigit():
                file += int(char)
            else:
                yield "abcdefgh"[file] + str(8 - rank_index), char
                file += 1


if __name__ == "__main__":
    args = [a.rstrip("/") for a in sys.argv[2:] if not a.startswith("--")]
    if sys.argv[1] == "duel":
        duel(*args, seek="--no-seek" not in sys.argv)
    elif sys.argv[1] == "late":
        late(*args)
    elif sys.argv[1] == "arena":
        arena(*args)
    elif sys.argv[1] == "swiss":
        swiss(*args)
    else:
        fog(*args)
    sys.stdout.flush()
