"""Runs the real lichess-bot against Fogblast with `fogblast uci` as its
engine, as a bot author would: a challenge made before it starts, an atomic
game played to its end, chat answered, and a restart mid-game resumed.

    lichess_bot.py LICHESS_BOT_DIR FOGBLAST_BIN [--uci-options defaults|hash]

LICHESS_BOT_DIR is a lichess-bot source release (its requirements installed
in this Python); FOGBLAST_BIN the `fogblast` binary. The script starts
`fogblast up` on a free port with its own files, writes lichess-bot's own
default configuration with only `token`, `url`, the engine and the variants
changed, and drives the opponent with berserk. It prints one JSON line of
what happened and exits non-zero when lichess-bot did not do its part.
"""

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import berserk
import requests
import yaml

PATIENCE_S = 300


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout=PATIENCE_S):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"waited {timeout} s for {what}")


def new_token(url):
    answer = requests.post(f"{url}/api/token", timeout=10)
    answer.raise_for_status()
    return answer.json()["access_token"], answer.json()["id"]


def write_config(bot_dir, work, url, token, fogblast, uci_options):
    with open(os.path.join(bot_dir, "config.yml.default")) as f:
        config = yaml.safe_load(f)
    engines = os.path.join(work, "engines")
    os.makedirs(engines, exist_ok=True)
    engine = os.path.join(engines, "fogblast-uci")
    with open(engine, "w") as f:
        f.write(f"#!/bin/sh\nexec {fogblast} uci\n")
    os.chmod(engine, 0o755)
    config["token"] = token
    config["url"] = url + "/"
    config["engine"]["dir"] = engines
    config["engine"]["name"] = "fogblast-uci"
    config["challenge"]["variants"] = ["standard", "atomic"]
    if uci_options == "hash":
        config["engine"]["uci_options"] = {"Hash": 64}
        config["engine"]["ponder"] = False
    path = os.path.join(work, "config.yml")
    with open(path, "w") as f:
        yaml.safe_dump(config, f)
    return path


def start_bot(bot_dir, config, log_path):
    log = open(log_path, "a")
    return subprocess.Popen(
        [sys.executable, "lichess-bot.py", "--config", config, "-v"],
        cwd=bot_dir,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop(process, sig=signal.SIGKILL):
    if process and process.poll() is None:
        os.killpg(process.pid, sig)
        process.wait(timeout=30)


class Opponent:
    """The challenger: berserk, random legal moves from `legal`, and a
    record of every chat line the bot wrote."""

    def __init__(self, url):
        token, self.id = new_token(url)
        self.client = berserk.Client(session=berserk.TokenSession(token), base_url=url)
        self.chat = []
        self.states = []
        self.plies = 0

    def play(self, game, my_color):
        for event in self.client.bots.stream_game_state(game):
            kind = event.get("type")
            if kind == "chatLine":
                self.chat.append(event)
                continue
            state = event.get("state") if kind == "gameFull" else event if kind == "gameState" else None
            if state is None:
                continue
            self.states.append(state)
            self.plies = len(state["moves"].split())
            if state["status"] != "started":
                return state
            if state.get("legal") and (self.plies % 2 == 0) == (my_color == "white"):
                try:
                    self.client.bots.make_move(game, random.choice(state["legal"]))
                except berserk.exceptions.ResponseError:
                    pass  # the position moved on; the next state says what is legal
        return self.states[-1] if self.states else None


def main():
    bot_dir, fogblast = sys.argv[1], sys.argv[2]
    uci_options = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--uci-options" else "defaults"
    work = tempfile.mkdtemp(prefix="fogblast-lichess-bot-")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [fogblast, "up", "--listen", f"127.0.0.1:{port}", "--live-store", os.path.join(work, "live.db")],
        cwd=work,
        stdout=open(os.path.join(work, "up.log"), "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    bot = None
    result = {"ok": False}
    try:
        wait_for("fogblast up", lambda: _answers(url), 120)
        bot_token, bot_id = new_token(url)
        config = write_config(bot_dir, work, url, bot_token, fogblast, uci_options)
        opponent = Opponent(url)
        # Challenged before it starts: lichess-bot hears of it as its
        # event stream opens.
        challenge = opponent.client.challenges.create(
            bot_id, rated=False, clock_limit=180, clock_increment=2, variant="atomic", color="white"
        )
        log = os.path.join(work, "lichess-bot.log")
        bot = start_bot(bot_dir, config, log)
        game = wait_for("the challenge to start a game", lambda: _game_of(opponent, challenge))
        result["game"] = game
        player = threading.Thread(target=lambda: result.update(end=opponent.play(game, "white")), daemon=True)
        player.start()
        opponent.client.bots.post_message(game, "!name")
        wait_for("the bot's first move", lambda: opponent.plies >= 2 or not player.is_alive())
        # Killed mid-game, then started again: it must find its game.
        stop(bot)
        result["killed_at_ply"] = opponent.plies
        bot = start_bot(bot_dir, config, log)
        player.join(PATIENCE_S)
        end = result.get("end") or {}
        result["status"] = end.get("status")
        result["plies"] = opponent.plies
        result["bot_chat"] = [line["text"] for line in opponent.chat if line.get("username") == bot_id]
        # The bot moved again after its restart, and the game has ended.
        result["resumed"] = opponent.plies >= result["killed_at_ply"] + 2
        finished = end.get("status") not in (None, "started", "aborted")
        result["ok"] = bool(finished and result["resumed"] and result["bot_chat"])
    finally:
        stop(bot, signal.SIGINT)
        stop(bot)
        stop(server, signal.SIGTERM)
        result["work"] = work
        print(json.dumps(result, default=str))
    if result["ok"]:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if result["ok"] else 1)


def _answers(url):
    try:
        return requests.get(f"{url}/healthz", timeout=2).status_code < 500
    except requests.RequestException:
        return False


def _game_of(opponent, challenge):
    game = challenge.get("gameId")
    try:
        if any(playing.get("gameId") == game for playing in opponent.client.games.get_ongoing()):
            return game
    except berserk.exceptions.ResponseError:
        pass
    return None


if __name__ == "__main__":
    main()
