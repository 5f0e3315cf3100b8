# Sourced by the scripts: the project's tools on PATH (its npm tools, then cargo's), and the two builds.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$root/scripts/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

# The two builds of the browser module: the app build that a JS app ships, made into the npm
# package by scripts/package (crate/pkg/, packed into target/package/), and the full build with
# simulate() that the page and the benchmark load (crate/pkg-full/; not published).
build_packages() {
  "$root/scripts/package"
  build_full
}
build_full() {
  (cd "$root" && wasm-pack build crate --release --target web --out-dir pkg-full --no-pack -- --features full)
}
