//! Size: what a page downloads, compressed as a server would send it, and which crates the
//! module's bytes come from (twiggy).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

/// Min+gzip sizes of what a user would pick instead, in bytes (kB = 1000 bytes). Constants, as
/// given in issue 5; not measured here.
pub const REFERENCES: [(&str, u64); 3] =
    [("ky 2.0.2", 7300), ("p-retry", 1500), ("fetch-retry", 1100)];

/// One file's (or several files') size as served: raw and compressed, in bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sizes {
    /// Uncompressed.
    pub raw: u64,
    /// `gzip -9`.
    pub gzip: u64,
    /// Brotli quality 11.
    pub brotli: u64,
}

impl Sizes {
    /// The sizes of both together.
    pub fn add(self, other: Sizes) -> Sizes {
        Sizes {
            raw: self.raw + other.raw,
            gzip: self.gzip + other.gzip,
            brotli: self.brotli + other.brotli,
        }
    }

    /// As the report holds it.
    pub fn to_json(self) -> Value {
        json!({ "raw": self.raw, "gzip9": self.gzip, "brotli11": self.brotli })
    }
}

/// Raw, `gzip -9` (the system's gzip, without a name or time stamp) and brotli quality 11
/// (window 22, the `brotli` command's defaults).
pub fn measure(path: &Path) -> Result<Sizes, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let gzip = Command::new("gzip")
        .args(["-9", "-n", "-c"])
        .arg(path)
        .output()
        .map_err(|e| format!("gzip: {e}"))?;
    if !gzip.status.success() {
        return Err(format!("gzip -9 {} failed", path.display()));
    }
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 22,
        ..Default::default()
    };
    let mut compressed = Vec::new();
    brotli::BrotliCompress(&mut bytes.as_slice(), &mut compressed, &params)
        .map_err(|e| format!("brotli: {e}"))?;
    Ok(Sizes {
        raw: bytes.len() as u64,
        gzip: gzip.stdout.len() as u64,
        brotli: compressed.len() as u64,
    })
}

/// One item of `twiggy top`.
#[derive(Clone, Debug)]
pub struct Item {
    /// The item's name, cleaned of hashes (see [`clean`]).
    pub name: String,
    /// Its shallow size.
    pub bytes: u64,
}

/// Every item of the module, from `twiggy top -f json`.
pub fn twiggy(path: &Path) -> Result<Vec<Item>, String> {
    let out = Command::new("twiggy")
        .args(["top", "-f", "json"])
        .arg(path)
        .output()
        .map_err(|e| format!("twiggy: {e} (scripts/bench installs it)"))?;
    if !out.status.success() {
        return Err(format!(
            "twiggy top {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let items: Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("twiggy's JSON: {e}"))?;
    Ok(items
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|item| {
            Some(Item {
                name: clean(item.get("name")?.as_str()?),
                bytes: item.get("shallow_size")?.as_u64()?,
            })
        })
        .collect())
}

/// The names of a module's custom sections.
pub fn custom_sections(module: &[u8]) -> Vec<String> {
    fn leb(bytes: &[u8], at: &mut usize) -> Option<usize> {
        let mut value = 0usize;
        for shift in (0..35).step_by(7) {
            let b = *bytes.get(*at)?;
            *at += 1;
            value |= usize::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    let mut names = Vec::new();
    let mut at = 8; // magic and version
    while at < module.len() {
        let id = module[at];
        at += 1;
        let Some(size) = leb(module, &mut at) else {
            break;
        };
        let end = at.saturating_add(size);
        if id == 0 {
            let mut p = at;
            if let Some(len) = leb(module, &mut p) {
                if let Some(name) = module.get(p..p + len) {
                    names.push(String::from_utf8_lossy(name).into_owned());
                }
            }
        }
        at = end;
    }
    names
}

/// Whether an item is in the shipped module: the name section is only in the build made for
/// twiggy, and of the other custom sections only those in `shipped_custom` are shipped.
pub fn shipped(item: &Item, shipped_custom: &[String]) -> bool {
    if item.name.ends_with(" subsection") || item.name == "\"name\" section headers" {
        return false;
    }
    match item.name.strip_prefix("custom section '") {
        Some(rest) => {
            let name = rest.split('\'').next().unwrap_or_default();
            shipped_custom.iter().any(|s| s == name)
        }
        None => true,
    }
}

/// Removes crate disambiguators (`core[c5930c85a12de822]`) and symbol hashes (`::h0123...`).
pub fn clean(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(open) = rest.find('[') {
        let tail = &rest[open + 1..];
        let hex = tail.bytes().take_while(u8::is_ascii_hexdigit).count();
        let (keep, skip) = if hex >= 8 && tail.as_bytes().get(hex) == Some(&b']') {
            (open, open + hex + 2)
        } else {
            (open + 1, open + 1)
        };
        out.push_str(&rest[..keep]);
        rest = &rest[skip..];
    }
    out.push_str(rest);
    if let Some(at) = out.rfind("::h") {
        let hash = &out[at + 3..];
        if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            out.truncate(at);
        }
    }
    out
}

const STD: [&str; 3] = ["core", "alloc", "std"];
/// The owner of data segments.
pub const DATA: &str = "(data segments: strings, tables)";
/// The owner of the module's own structure.
pub const STRUCTURE: &str = "(module structure: types, imports, exports, tables, headers)";
/// The owner of functions without a name.
pub const UNNAMED: &str = "(unnamed functions)";
/// The owner of the exported functions.
pub const API: &str = "retry_budget (JS API entry points)";

/// Which crate (or part of the module) an item's bytes belong to. Code inlined into a function
/// counts for the function it was inlined into; a trait impl counts for the crate of its type,
/// unless the type is from the standard library and the trait is not (serde's impls for `Vec`,
/// for example, count for serde).
pub fn owner(name: &str) -> String {
    if name.starts_with("data segment") {
        return DATA.into();
    }
    if name.starts_with("custom section") {
        return STRUCTURE.into();
    }
    if name.starts_with("code[") {
        return UNNAMED.into();
    }
    if [
        "type[", "import ", "export ", "elem[", "table[", "global[", "memory[",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        || name.ends_with(" headers")
    {
        return STRUCTURE.into();
    }
    if name.starts_with("__wbindgen")
        || name.starts_with("__wbg")
        || name.starts_with("__externref")
        || name.starts_with("wasm_bindgen__")
    {
        return "wasm_bindgen".into();
    }
    if !name.contains("::") {
        if name.contains(" shim") {
            // "simulate externref shim ...": an exported function with its body inlined.
            let first = name.split(' ').next().unwrap_or_default();
            return if first.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                API.into()
            } else {
                "wasm_bindgen".into()
            };
        }
        if name.starts_with("__")
            || ["memcpy", "memmove", "memset", "memcmp", "bcmp"].contains(&name)
        {
            return "compiler_builtins".into();
        }
        return API.into();
    }
    crate_of(name).unwrap_or_else(|| "(other)".into())
}

/// What part of the program an item of the app build belongs to: `model` (the pure model,
/// `retry_budget_model`), `driver` (the rest of `retry_budget`), `glue` (wasm-bindgen, js-sys,
/// web-sys and the exported functions' shims), `allocator` (lol_alloc), `runtime` (the standard
/// library, compiler builtins, gloo-timers), `data` (data segments), or `structure`, `unnamed`
/// and `other` for what is none of these.
pub fn part(name: &str) -> &'static str {
    let owner = owner(name);
    match owner.as_str() {
        "retry_budget_model" => "model",
        "retry_budget" => "driver",
        // The exported functions: wasm-bindgen's shims around the driver's entry points.
        API | "wasm_bindgen" | "wasm_bindgen_futures" | "js_sys" | "web_sys" => "glue",
        "lol_alloc" => "allocator",
        "core" | "alloc" | "std" | "compiler_builtins" | "gloo_timers" => "runtime",
        DATA => "data",
        STRUCTURE => "structure",
        UNNAMED => "unnamed",
        _ => "other",
    }
}

fn is_std(krate: &str) -> bool {
    STD.contains(&krate)
}

/// The crate of a demangled path or qualified path.
fn crate_of(name: &str) -> Option<String> {
    let name = name.trim();
    if let Some(rest) = name.strip_prefix('<') {
        let inner = &rest[..matching(rest)?];
        let (self_ty, trait_path) = match split_as(inner) {
            Some((t, tr)) => (t, Some(tr)),
            None => (inner, None),
        };
        let ty = type_crate(self_ty);
        let tr = trait_path.and_then(crate_of);
        return match (ty, tr) {
            (Some(t), _) if !is_std(&t) => Some(t),
            (_, Some(tr)) if !is_std(&tr) => Some(tr),
            // `<str>::eq_ignore_ascii_case`: an inherent method of a primitive type.
            (None, None) => Some("core".into()),
            (t, tr) => t.or(tr),
        };
    }
    let ident_len = name
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    if ident_len == 0 || !name[ident_len..].starts_with("::") {
        return None;
    }
    let krate = match &name[..ident_len] {
        // The global allocator's default functions (`__rustc::__rdl_alloc`).
        "__rustc" => "std",
        other => other,
    };
    // Drop glue counts for the type it drops.
    if let Some(rest) = name.strip_prefix("core::ptr::drop_in_place<") {
        if let Some(t) = rest.get(..matching(rest)?).and_then(type_crate) {
            if !is_std(&t) {
                return Some(t);
            }
        }
    }
    Some(krate.to_owned())
}

/// The crate of a type: a path's crate; references, pointers, slices and `dyn` looked through.
fn type_crate(ty: &str) -> Option<String> {
    let mut ty = ty.trim();
    loop {
        let before = ty;
        for prefix in ["&", "*const ", "*mut ", "mut ", "dyn ", "[", "("] {
            ty = ty.strip_prefix(prefix).unwrap_or(ty).trim_start();
        }
        if ty == before {
            break;
        }
    }
    crate_of(ty)
}

/// The index of the `>` that closes an already opened `<`.
fn matching(s: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'<' => depth += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits `Type as Trait` at its top-level ` as `.
fn split_as(s: &str) -> Option<(&str, &str)> {
    let mut depth = 0usize;
    let bytes = s.as_bytes();
    for i in 0..bytes.len() {
        match bytes[i] {
            b'<' => depth += 1,
            b'>' => depth = depth.saturating_sub(1),
            b' ' if depth == 0 && s[i..].starts_with(" as ") => {
                return Some((&s[..i], &s[i + 4..]));
            }
            _ => {}
        }
    }
    None
}

/// Bytes by owner (crate), largest first.
pub fn by_owner(items: &[&Item]) -> Vec<(String, u64)> {
    totals(items, owner)
}

/// Bytes by part of the program (see [`part`]), largest first.
pub fn by_part(items: &[&Item]) -> Vec<(String, u64)> {
    totals(items, |name| part(name).to_owned())
}

/// Bytes by `key` of the items' names, largest first.
fn totals(items: &[&Item], key: impl Fn(&str) -> String) -> Vec<(String, u64)> {
    let mut owners: BTreeMap<String, u64> = BTreeMap::new();
    for item in items {
        *owners.entry(key(&item.name)).or_default() += item.bytes;
    }
    let mut owners: Vec<(String, u64)> = owners.into_iter().collect();
    owners.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cleaned() {
        assert_eq!(
            clean("<f64 as core[c5930c85a12de822]::fmt::Display>::fmt"),
            "<f64 as core::fmt::Display>::fmt"
        );
        assert_eq!(
            clean("retry_budget::scenario::parse_scenario::h3896f2bc1fd51c47"),
            "retry_budget::scenario::parse_scenario"
        );
        assert_eq!(
            clean("data segment \".rodata\""),
            "data segment \".rodata\""
        );
        assert_eq!(clean("elem[0]"), "elem[0]");
    }

    #[test]
    fn owners() {
        assert_eq!(owner("<f64 as core::fmt::Display>::fmt"), "core");
        assert_eq!(
            owner("<serde_wasm_bindgen::de::Deserializer as serde_core::de::Deserializer>::deserialize_any"),
            "serde_wasm_bindgen"
        );
        assert_eq!(
            owner("<alloc::vec::Vec<T> as serde_core::ser::Serialize>::serialize"),
            "serde_core"
        );
        assert_eq!(
            owner("<dlmalloc::dlmalloc::Dlmalloc<dlmalloc::sys::System>>::malloc"),
            "dlmalloc"
        );
        assert_eq!(
            owner("core::ptr::drop_in_place<retry_budget::action::Action>"),
            "retry_budget"
        );
        assert_eq!(
            owner("core::ptr::drop_in_place<alloc::string::String>"),
            "core"
        );
        assert_eq!(
            owner("js_sys::futures::future_to_promise::{{closure}}::{{closure}}"),
            "js_sys"
        );
        assert_eq!(owner("<&T as core::fmt::Debug>::fmt"), "core");
        assert_eq!(owner("simulate externref shim multivalue shim"), API);
        assert_eq!(
            owner("Ref(String) -> Externref externref shim"),
            "wasm_bindgen"
        );
        assert_eq!(owner("runningActions"), API);
        assert_eq!(owner("memcmp"), "compiler_builtins");
        assert_eq!(owner("__multi3"), "compiler_builtins");
        assert_eq!(owner("__wbindgen_malloc"), "wasm_bindgen");
        assert_eq!(owner("data segment \".rodata.1\""), DATA);
        assert_eq!(owner("type[3]: (i32) -> nil"), STRUCTURE);
        assert_eq!(owner("export \"simulate\""), STRUCTURE);
        assert_eq!(owner("code[12]"), UNNAMED);
        assert_eq!(owner("<str>::eq_ignore_ascii_case"), "core");
        assert_eq!(owner("__rustc::__rdl_realloc"), "std");
        assert_eq!(owner("custom section 'target_features'"), STRUCTURE);
    }

    #[test]
    fn parts() {
        assert_eq!(part("retry_budget_model::budget::Budget::decide"), "model");
        assert_eq!(part("retry_budget::driver::Driver::step"), "driver");
        assert_eq!(part("fetchWithBudget externref shim"), "glue");
        assert_eq!(part("runningActions"), "glue");
        assert_eq!(part("js_sys::Promise::new"), "glue");
        assert_eq!(part("__wbindgen_malloc"), "glue");
        assert_eq!(
            part("<lol_alloc::AssumeSingleThreaded<T> as core::alloc::global::GlobalAlloc>::alloc"),
            "allocator"
        );
        assert_eq!(part("<f64 as core::fmt::Display>::fmt"), "runtime");
        assert_eq!(part("memcpy"), "runtime");
        assert_eq!(part("gloo_timers::callback::Timeout::new"), "runtime");
        assert_eq!(part("data segment \".rodata\""), "data");
        assert_eq!(part("type[3]: (i32) -> nil"), "structure");
        assert_eq!(part("code[12]"), "unnamed");
    }

    #[test]
    fn custom_section_names() {
        // magic, version, a custom section "hi" with one byte of payload, a type section.
        let module = [
            0, b'a', b's', b'm', 1, 0, 0, 0, 0, 4, 2, b'h', b'i', 9, 1, 1, 0,
        ];
        assert_eq!(custom_sections(&module), ["hi"]);
        let item = |name: &str| Item {
            name: name.into(),
            bytes: 1,
        };
        let shipped_custom = vec!["target_features".to_owned()];
        assert!(shipped(
            &item("custom section 'target_features'"),
            &shipped_custom
        ));
        assert!(!shipped(
            &item("custom section 'producers'"),
            &shipped_custom
        ));
        assert!(!shipped(
            &item("\"function names\" subsection"),
            &shipped_custom
        ));
        assert!(shipped(&item("code[1]"), &shipped_custom));
    }
}
