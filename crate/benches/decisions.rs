//! Decision cost: what one model decision and one full replay cost natively.

fn main() {
    divan::main();
}
