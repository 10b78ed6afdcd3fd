#!/usr/bin/env bash
# Plays Fogblast's fog-of-war computer against misty (misty-chess on PyPI,
# GPL: an outside opponent only, never part of the build), each side told
# only what it sees; see docs/engine.md ("Against misty").
#   tests/python/misty/match.sh [fogblast-tools fog-match options]
# e.g. tests/python/misty/match.sh --games 40 --record target/misty.jsonl
# Installs what it needs when missing: Stockfish (apt-get, as root; misty
# evaluates its leaves with it) and misty in a virtual environment under
# the target directory, from tests/python/misty/requirements.txt.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "match.sh: need root to run: $*" >&2
    return 1
  fi
}

if ! command -v stockfish >/dev/null && [ ! -x /usr/games/stockfish ]; then
  echo "match.sh: installing Stockfish" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq stockfish
fi
if ! python3 -c "import ensurepip, venv" 2>/dev/null; then
  echo "match.sh: installing Python 3 with venv" >&2
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq python3 python3-venv
fi
venv="$target/misty-venv"
requirements=tests/python/misty/requirements.txt
if [ ! -x "$venv/bin/python" ] || [ "$requirements" -nt "$venv/installed" ]; then
  echo "match.sh: installing misty into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$requirements"
  touch "$venv/installed"
fi

cargo build --release -p fogblast --bin fogblast-tools
exec nice -n 10 "$target/release/fogblast-tools" fog-match --python "$venv/bin/python" \
  --player tests/python/misty/misty_player.py "$@"
