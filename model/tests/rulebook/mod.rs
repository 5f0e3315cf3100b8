//! The rulebook, `docs/rules.md`, read by the tests that hold the model to it, so that what a
//! table there says is written once: the tests compare with the document itself, not a copy.

// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

/// The body rows of the first table after the line that contains `marker`, each cell trimmed
/// (the header row and its rule left out). Panics naming the marker when it is not there, or
/// when no table follows it.
pub fn table_after(marker: &str) -> Vec<Vec<String>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules.md");
    let text = std::fs::read_to_string(path).expect("docs/rules.md is readable");
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("docs/rules.md has no line with {marker:?}"));
    let rows: Vec<Vec<String>> = text[start..]
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| {
            let cells = line.trim().trim_start_matches('|').trim_end_matches('|');
            cells.split('|').map(|c| c.trim().to_owned()).collect()
        })
        .collect();
    assert!(!rows.is_empty(), "docs/rules.md: no table after {marker:?}");
    rows
}

/// The names written in backquotes in `cell`: "`elapsed_s`, `attempts`" is both.
pub fn quoted(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}
