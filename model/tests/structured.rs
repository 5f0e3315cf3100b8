//! The RateLimit reader's structured-field parser (`structured::parse_list`) against a
//! well-kept reference, the `sfv` crate: on every generated input, both accept or both refuse,
//! and when they accept they see the same members, the same Inner Lists and the same Integer
//! parameters. The inputs are built from the grammar's pieces (every bare item type, edge
//! lengths of numbers, escapes, padding, separators) and then mutated byte by byte, so most
//! are near-misses of valid Lists.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::Config;
use retry_budget_model::structured::{parse_list, Member};
use sfv::{BareItem, List, ListEntry, Parameters, Parser};

/// A bare item, valid or nearly so.
fn bare_item() -> impl Strategy<Value = String> {
    let digits = |n: std::ops::RangeInclusive<usize>| {
        vec(prop_oneof![Just('0'), Just('1'), Just('7'), Just('9')], n)
            .prop_map(|d| d.into_iter().collect::<String>())
    };
    prop_oneof![
        (any::<bool>(), digits(0..=17))
            .prop_map(|(neg, d)| format!("{}{d}", if neg { "-" } else { "" })),
        (digits(0..=14), digits(0..=5)).prop_map(|(w, f)| format!("{w}.{f}")),
        "\"([a-z ]|\\\\\\\\|\\\\\"|\\\\a|\\t|é)*\"?",
        "[A-Za-z*][A-Za-z0-9!#$%&'*+.^_`|~:/-]{0,6}",
        ":[A-Za-z0-9+/=]{0,9}:?",
        "\\?[0-2]",
        (digits(0..=16), prop::option::of(digits(0..=4)))
            .prop_map(|(w, f)| format!("@{w}{}", f.map(|f| format!(".{f}")).unwrap_or_default())),
        "%\"([a-z ]|%[0-9a-fA-F]{0,2}|%c3%a9|%ff|\\t)*\"?",
    ]
}

/// Parameters: `;key` or `;key=item`, keys valid or not.
fn parameters() -> impl Strategy<Value = String> {
    vec(
        (
            "[a-z*][a-z0-9_.*-]{0,3}|[A-Z0-9_][a-z]{0,2}|[rt]",
            prop::option::of(bare_item()),
            prop_oneof![Just(""), Just(" ")],
        ),
        0..3,
    )
    .prop_map(|params| {
        params
            .into_iter()
            .map(|(key, value, space)| match value {
                Some(v) => format!(";{space}{key}={v}"),
                None => format!(";{space}{key}"),
            })
            .collect()
    })
}

/// A member: an Item or an Inner List, with parameters.
fn member() -> impl Strategy<Value = String> {
    let item = || (bare_item(), parameters()).prop_map(|(b, p)| format!("{b}{p}"));
    prop_oneof![
        3 => item(),
        1 => (vec(item(), 0..3), "[ ]{0,2}", parameters())
            .prop_map(|(items, pad, p)| format!("({pad}{}{pad}){p}", items.join(" "))),
    ]
}

/// A List's text: members, separators and padding, then a few byte-level mutations.
fn list_text() -> impl Strategy<Value = String> {
    let separators = prop_oneof![
        Just(", "),
        Just(","),
        Just(" ,\t"),
        Just("  ,  "),
        Just(" ")
    ];
    (
        "[ \t]{0,2}",
        vec((member(), separators), 0..4),
        "[ \t,]{0,2}",
        prop_oneof![
            3 => Just(Vec::new()),
            1 => vec((any::<prop::sample::Index>(), prop::char::range(' ', '~')), 1..3),
        ],
    )
        .prop_map(|(lead, members, tail, mutations)| {
            let mut text: String = members
                .into_iter()
                .enumerate()
                .map(|(i, (m, sep))| if i == 0 { m } else { format!("{sep}{m}") })
                .collect();
            text = format!("{lead}{text}{tail}");
            for (at, c) in mutations {
                let chars: Vec<char> = text.chars().collect();
                let i = at.index(chars.len() + 1);
                text = chars[..i]
                    .iter()
                    .chain(std::iter::once(&c))
                    .chain(&chars[i..])
                    .collect();
            }
            text
        })
}

/// A List made of valid pieces only: the agreement on what is accepted needs both kinds.
fn clean_list_text() -> impl Strategy<Value = String> {
    let item = prop_oneof![
        "-?[1-9][0-9]{0,14}",
        "-?[0-9]{1,12}\\.[0-9]{1,3}",
        "\"[a-z ]{0,5}\"",
        "[a-z*][a-z0-9:/-]{0,5}",
        ":(YWJj|YWI=|YQ==)?:",
        "\\?[01]",
        "@[0-9]{1,10}",
        "%\"([a-z]|%c3%a9)*\"",
    ];
    let param = (
        "[a-z*][a-z0-9_.-]{0,2}|[rt]",
        prop::option::of(prop_oneof!["[0-9]{1,4}", "\\?[01]", "[a-z]{1,3}"]),
    )
        .prop_map(|(k, v)| v.map_or_else(|| format!(";{k}"), |v| format!(";{k}={v}")));
    let member = (item, vec(param, 0..3)).prop_map(|(i, p)| format!("{i}{}", p.concat()));
    vec(member, 0..4).prop_map(|members| members.join(", "))
}

/// What `sfv` reads of a List: each member's Inner-List-ness and its Integer parameters.
fn reference(text: &str) -> Option<Vec<Member>> {
    let list: List = Parser::new(text).parse().ok()?;
    let params = |params: &Parameters| {
        params
            .iter()
            .map(|(key, value)| {
                let integer = match value {
                    BareItem::Integer(n) => Some(i64::from(*n)),
                    _ => None,
                };
                (key.as_str().to_owned(), integer)
            })
            .collect()
    };
    Some(
        list.iter()
            .map(|entry| match entry {
                ListEntry::Item(item) => Member {
                    inner_list: false,
                    params: params(&item.params),
                },
                ListEntry::InnerList(inner) => Member {
                    inner_list: true,
                    params: params(&inner.params),
                },
            })
            .collect(),
    )
}

proptest! {
    #![proptest_config(Config { cases: 20_000, ..Config::default() })]

    #[test]
    fn it_reads_what_sfv_reads(text in prop_oneof![list_text(), clean_list_text()]) {
        prop_assert_eq!(parse_list(&text), reference(&text), "{:?}", text);
    }
}

/// Enough of the generated inputs are valid Lists for the agreement to mean something.
#[test]
fn the_generator_makes_valid_lists_as_well_as_near_misses() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut valid, mut total) = (0, 0);
    for _ in 0..2_000 {
        let inputs = prop_oneof![list_text(), clean_list_text()];
        let text = inputs.new_tree(&mut runner).expect("a value").current();
        total += 1;
        valid += usize::from(reference(&text).is_some());
    }
    assert!(
        valid * 5 > total,
        "only {valid} of {total} generated inputs are valid Lists"
    );
    assert!(
        valid * 5 < total * 4,
        "{valid} of {total} generated inputs are valid Lists"
    );
}

#[test]
fn edge_cases_agree() {
    let cases = [
        "",
        " ",
        "\t",
        "a",
        "a,",
        "a, b",
        "a ,\tb",
        "1;r=0;t=5",
        "999999999999999",
        "1000000000000000",
        "-999999999999999",
        "000000000000000",
        "123456789012.123",
        "1234567890123.1",
        "1.1234",
        "1.",
        "-",
        "\"a\\\"b\"",
        "\"a\\b\"",
        ":YWJj:",
        ":YWI:",
        ":YWI=:",
        ":YWI==:",
        ":YQ==:",
        ":YQ=:",
        ":YWJjZA=:",
        ":YWJj=:",
        ":YQ:",
        ":Y:",
        ":====:",
        ":YW=I:",
        "?1",
        "?2",
        "@1659578233",
        "@1.5",
        "%\"caf%c3%a9\"",
        "%\"%C3%A9\"",
        "%\"%ff\"",
        "(a b);r=0",
        "(a  b )",
        "(a,b)",
        "()",
        "a;R=0",
        "a;*x=1",
        "a; r=1",
        "a ;r=1",
        "a;r=1;r=0",
    ];
    for text in cases {
        assert_eq!(parse_list(text), reference(text), "{text:?}");
    }
}
