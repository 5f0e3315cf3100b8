# Sourced by the scripts: the project's tools on PATH, and the browsers' drivers found.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$root/scripts/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
