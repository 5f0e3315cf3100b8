//! RFC 9651 structured-field Lists, read strictly: the whole field is a valid List or nothing.
//! Just what the `RateLimit` field needs to be read: each member, whether it is an Inner List,
//! and its parameters, with the value of each Integer parameter. Every other bare item type
//! (Decimal, String, Token, Byte Sequence, Boolean, Date, Display String) is checked and then
//! set aside.
//!
//! A parser of its own rather than the `sfv` crate's: `sfv` measured about 10 kB gzip in what
//! every page downloads (docs/benchmarks.md, "Size"), this about 1.5 kB. The property test
//! `model/tests/structured.rs` holds it to `sfv` on every input it generates: the same inputs
//! accepted, and the same members and Integer parameters read.

/// One member of a List: whether it is an Inner List, and its parameters (the last value of a
/// repeated key wins), each with its value when it is an Integer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Whether the member is an Inner List rather than an Item.
    pub inner_list: bool,
    /// The member's parameters: key, and the value when it is an Integer.
    pub params: Vec<(String, Option<i64>)>,
}

impl Member {
    /// The Integer value of parameter `key`, if it has one.
    pub fn integer(&self, key: &str) -> Option<i64> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| *v)
    }
}

/// Parses `input` as a List (RFC 9651, sections 4.2 and 4.2.1); `None` when it is not one.
pub fn parse_list(input: &str) -> Option<Vec<Member>> {
    let mut p = Parser {
        rest: input.as_bytes(),
    };
    p.skip(|c| c == b' ');
    let mut members = Vec::new();
    while !p.rest.is_empty() {
        members.push(p.member()?);
        p.skip(|c| c == b' ' || c == b'\t');
        if p.rest.is_empty() {
            break;
        }
        p.expect(b',')?;
        p.skip(|c| c == b' ' || c == b'\t');
        if p.rest.is_empty() {
            return None; // a trailing comma
        }
    }
    Some(members)
}

/// What is left of the input.
struct Parser<'a> {
    rest: &'a [u8],
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let (first, rest) = self.rest.split_first()?;
        self.rest = rest;
        Some(*first)
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        (self.bump()? == c).then_some(())
    }

    fn skip(&mut self, what: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&what) {
            self.bump();
        }
    }

    /// An Item or an Inner List, with its parameters (section 4.2.1.1).
    fn member(&mut self) -> Option<Member> {
        let inner_list = self.peek() == Some(b'(');
        if inner_list {
            self.inner_list()?;
        } else {
            self.bare_item()?;
        }
        let params = self.parameters()?;
        Some(Member { inner_list, params })
    }

    /// An Inner List's items, up to its `)` (section 4.2.1.2).
    fn inner_list(&mut self) -> Option<()> {
        self.expect(b'(')?;
        loop {
            self.skip(|c| c == b' ');
            if self.peek()? == b')' {
                self.bump();
                return Some(());
            }
            self.bare_item()?;
            self.parameters()?;
            if !matches!(self.peek()?, b' ' | b')') {
                return None;
            }
        }
    }

    /// Parameters (section 4.2.3.2): the last value of a repeated key wins.
    fn parameters(&mut self) -> Option<Vec<(String, Option<i64>)>> {
        let mut params: Vec<(String, Option<i64>)> = Vec::new();
        while self.peek() == Some(b';') {
            self.bump();
            self.skip(|c| c == b' ');
            let key = self.key()?;
            let value = if self.peek() == Some(b'=') {
                self.bump();
                self.bare_item()?
            } else {
                None // Boolean true
            };
            match params.iter_mut().find(|(k, _)| *k == key) {
                Some(known) => known.1 = value,
                None => params.push((key, value)),
            }
        }
        Some(params)
    }

    /// A key (section 4.2.3.3).
    fn key(&mut self) -> Option<String> {
        let first = self.peek()?;
        if !(first.is_ascii_lowercase() || first == b'*') {
            return None;
        }
        let mut key = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"_-.*".contains(c))
        {
            key.push(char::from(c));
            self.bump();
        }
        Some(key)
    }

    /// A bare item (section 4.2.3.1): its value when it is an Integer.
    fn bare_item(&mut self) -> Option<Option<i64>> {
        match self.peek()? {
            b'-' | b'0'..=b'9' => self.number(),
            b'"' => self.string().map(|()| None),
            b':' => self.byte_sequence().map(|()| None),
            b'?' => self.boolean().map(|()| None),
            b'@' => self.date().map(|()| None),
            b'%' => self.display_string().map(|()| None),
            c if c.is_ascii_alphabetic() || c == b'*' => self.token().map(|()| None),
            _ => None,
        }
    }

    /// An Integer or a Decimal (section 4.2.4); `Some(n)` for an Integer, `Some(None)` for a
    /// Decimal.
    fn number(&mut self) -> Option<Option<i64>> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.bump();
        }
        let (whole, fraction) = (self.digits(), self.fraction()?);
        match fraction {
            None if (1..=15).contains(&whole.len()) => {
                let n: i64 = whole.parse().ok()?;
                Some(Some(if negative { -n } else { n }))
            }
            Some(f) if (1..=12).contains(&whole.len()) && (1..=3).contains(&f.len()) => Some(None),
            _ => None,
        }
    }

    /// A Date (section 4.2.9): `@` and an Integer, never a Decimal.
    fn date(&mut self) -> Option<()> {
        self.expect(b'@')?;
        self.number()?.map(|_| ())
    }

    fn digits(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            out.push(char::from(c));
            self.bump();
        }
        out
    }

    /// A Decimal's fraction, if a `.` follows: `Some(None)` for none.
    fn fraction(&mut self) -> Option<Option<String>> {
        if self.peek() != Some(b'.') {
            return Some(None);
        }
        self.bump();
        Some(Some(self.digits()))
    }

    /// A String (section 4.2.5).
    fn string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            match self.bump()? {
                b'\\' => {
                    if !matches!(self.bump()?, b'"' | b'\\') {
                        return None;
                    }
                }
                b'"' => return Some(()),
                0x20..=0x7e => {}
                _ => return None,
            }
        }
    }

    /// A Token (section 4.2.6).
    fn token(&mut self) -> Option<()> {
        self.bump();
        self.skip(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~:/".contains(&c));
        Some(())
    }

    /// A Byte Sequence (section 4.2.7): base64 between colons. As the section asks, padding
    /// may be left out, and a short one is let pass; more than the data needs is refused.
    fn byte_sequence(&mut self) -> Option<()> {
        self.expect(b':')?;
        let end = self.rest.iter().position(|c| *c == b':')?;
        let (content, rest) = self.rest.split_at(end);
        self.rest = rest.get(1..)?;
        let data = content.iter().take_while(|c| **c != b'=').count();
        let padding = content.len() - data;
        let base64 = |c: &u8| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/';
        let valid = content[..data].iter().all(base64)
            && content[data..].iter().all(|c| *c == b'=')
            && data % 4 != 1
            && padding <= (4 - data % 4) % 4;
        valid.then_some(())
    }

    /// A Boolean (section 4.2.8).
    fn boolean(&mut self) -> Option<()> {
        self.expect(b'?')?;
        matches!(self.bump()?, b'0' | b'1').then_some(())
    }

    /// A Display String (section 4.2.10): percent-encoded UTF-8 between `%"` and `"`.
    fn display_string(&mut self) -> Option<()> {
        self.expect(b'%')?;
        self.expect(b'"')?;
        let mut bytes = Vec::new();
        loop {
            match self.bump()? {
                b'"' => return String::from_utf8(bytes).ok().map(|_| ()),
                b'%' => {
                    let hex = |c: u8| match c {
                        b'0'..=b'9' => Some(c - b'0'),
                        b'a'..=b'f' => Some(c - b'a' + 10),
                        _ => None,
                    };
                    let high = hex(self.bump()?)?;
                    bytes.push(high * 16 + hex(self.bump()?)?);
                }
                c @ 0x20..=0x7e => bytes.push(c),
                _ => return None,
            }
        }
    }
}
