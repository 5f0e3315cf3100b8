//! The size section of the report: both builds' files side by side, the app build's largest
//! items by the part of the program they belong to, and the full build's bytes by crate.

use std::path::Path;

use serde_json::{json, Value};

use crate::size::{self, Item, Sizes};
use crate::stats;

/// One build of the browser module.
pub struct Build {
    /// Its name in the report.
    pub name: &'static str,
    /// Its package directory under the root, which is also its path on the fixture server.
    pub pkg: &'static str,
    /// The command that makes it.
    pub command: &'static str,
}

/// The app build (what a JS app ships) and the full build (with `simulate`).
pub const BUILDS: [Build; 2] = [
    Build {
        name: "app",
        pkg: "pkg",
        command: "wasm-pack build crate --release --target web --out-dir pkg --no-pack",
    },
    Build {
        name: "full",
        pkg: "pkg-full",
        command: "wasm-pack build crate --release --target web --out-dir pkg-full --no-pack -- --features full",
    },
];

/// The files of a package that a page downloads.
const FILES: [&str; 2] = ["retry_budget_bg.wasm", "retry_budget.js"];

/// How many of the app build's largest items the report lists.
pub const TOP: usize = 20;

/// The modules that keep their names, for twiggy: the app build's and the full build's.
pub struct Named<'a> {
    /// The app build's module.
    pub app: &'a Path,
    /// The full build's module.
    pub full: &'a Path,
}

/// The size section: every build's files, the references, and twiggy's view of both modules.
pub fn section(root: &Path, named: &Named, errors: &mut Vec<String>) -> Value {
    let builds: Vec<Value> = BUILDS
        .iter()
        .map(|b| build_files(root, b, errors))
        .collect();
    let references: Vec<Value> = size::REFERENCES
        .iter()
        .map(|(name, bytes)| json!({ "name": name, "bytes": bytes }))
        .collect();
    let [app, full] = BUILDS.map(|b| root.join("crate").join(b.pkg).join(FILES[0]));
    let twiggy_app = match items(named.app, &app) {
        Ok(m) => by_part_json(&m),
        Err(e) => crate::failed(errors, "twiggy (app build)", e),
    };
    let twiggy_full = match items(named.full, &full) {
        Ok(m) => by_crate_json(&m),
        Err(e) => crate::failed(errors, "twiggy (full build)", e),
    };
    json!({
        "builds": builds,
        "reference_min_gzip_bytes": references,
        "reference_note": "constants (min+gzip as published for each library), not measured here",
        "twiggy": { "app": twiggy_app, "full": twiggy_full },
    })
}

/// One build's files, each and in total.
fn build_files(root: &Path, build: &Build, errors: &mut Vec<String>) -> Value {
    let dir = root.join("crate").join(build.pkg);
    let mut files = Vec::new();
    let mut total = Sizes::default();
    for name in FILES {
        match size::measure(&dir.join(name)) {
            Ok(s) => {
                total = total.add(s);
                files.push(json!({ "file": name, "bytes": s.to_json() }));
            }
            Err(e) => files.push(crate::failed(errors, &format!("size ({})", build.name), e)),
        }
    }
    files.push(json!({ "file": "total", "bytes": total.to_json() }));
    json!({
        "build": build.name,
        "package": format!("crate/{}", build.pkg),
        "command": build.command,
        "files": files,
    })
}

/// A names-kept module's items that the shipped module has too.
struct Module {
    source: String,
    items: Vec<Item>,
    sum: u64,
    shipped_bytes: usize,
}

impl Module {
    /// `bytes` as a percentage of the module's items.
    fn percent(&self, bytes: u64) -> f64 {
        stats::round(bytes as f64 * 100.0 / self.sum.max(1) as f64)
    }

    /// The module's items, largest first.
    fn refs(&self) -> Vec<&Item> {
        let mut refs: Vec<&Item> = self.items.iter().collect();
        refs.sort_by_key(|i| std::cmp::Reverse(i.bytes));
        refs
    }

    /// What the report says of the module as a whole.
    fn head(&self) -> serde_json::Map<String, Value> {
        let mut head = serde_json::Map::new();
        head.insert("source".into(), json!(self.source));
        head.insert(
            "note".into(),
            json!(
                "twiggy top over the module built with the same flags but keeping its names; \
                 the name section and the custom sections the shipped module lacks are left out, \
                 so the sum matches the shipped module's size when both builds are alike"
            ),
        );
        head.insert("sum_bytes".into(), json!(self.sum));
        head.insert("shipped_bytes".into(), json!(self.shipped_bytes));
        head
    }
}

/// The items of `named` (twiggy top) that are in the module shipped at `shipped`.
fn items(named: &Path, shipped: &Path) -> Result<Module, String> {
    let shipped_wasm = std::fs::read(shipped).map_err(|e| format!("{}: {e}", shipped.display()))?;
    let shipped_custom = size::custom_sections(&shipped_wasm);
    let items: Vec<Item> = size::twiggy(named)?
        .into_iter()
        .filter(|i| size::shipped(i, &shipped_custom))
        .collect();
    Ok(Module {
        source: named.display().to_string(),
        sum: items.iter().map(|i| i.bytes).sum(),
        shipped_bytes: shipped_wasm.len(),
        items,
    })
}

/// The app build: its `TOP` largest items, each with its part, and the bytes of each part.
fn by_part_json(m: &Module) -> Value {
    let refs = m.refs();
    let mut out = m.head();
    out.insert(
        "by_part".into(),
        size::by_part(&refs)
            .into_iter()
            .map(|(part, bytes)| json!({ "part": part, "bytes": bytes, "percent": m.percent(bytes) }))
            .collect(),
    );
    out.insert(
        "top".into(),
        refs.iter()
            .take(TOP)
            .map(|i| {
                json!({
                    "item": i.name,
                    "part": size::part(&i.name),
                    "bytes": i.bytes,
                    "percent": m.percent(i.bytes),
                })
            })
            .collect(),
    );
    Value::Object(out)
}

/// The full build: its bytes by crate.
fn by_crate_json(m: &Module) -> Value {
    let refs = m.refs();
    let mut out = m.head();
    out.insert(
        "by_crate".into(),
        size::by_owner(&refs)
            .into_iter()
            .map(|(owner, bytes)| json!({ "crate": owner, "bytes": bytes, "percent": m.percent(bytes) }))
            .collect(),
    );
    Value::Object(out)
}
