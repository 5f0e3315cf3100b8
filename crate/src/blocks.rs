//! What the service told a limit (`docs/rules.md`, rules 13-18 and "In the browser"): the
//! blocks in force ("no request under this scope before T"), shared by the actions of this page
//! or worker with the same scope; with `share: "tabs"` also by the other tabs and workers of
//! this page's origin (a `BroadcastChannel`) and by the pages of it that load later while a
//! block lasts (the origin's `localStorage`).
//!
//! A block learned with `share: "page"` never leaves its page, not even when another tab asks
//! what this page knows. Times are milliseconds on a clock that documents of one browser share,
//! `performance.timeOrigin + performance.now()` (see [`crate::clock::shared_now_ms`]). Blocks
//! that have ended are forgotten at every look, stored ones that cannot be read are removed,
//! and a listener of an action that ended is dropped with it: nothing grows without bound.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use gloo_events::EventListener;
use js_sys::{Object, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{BroadcastChannel, MessageEvent, Storage};

use crate::clock::shared_now_ms;
use crate::inbox::Inbox;
use crate::js::{global, has_method, member, set};

/// Who hears of an action's blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Share {
    /// Nobody: the action neither tells nor hears.
    None,
    /// Every action of this page or worker with the same scope (the default).
    Page,
    /// Also every other tab and worker of this page's origin, and its later pages.
    Tabs,
}

/// Where a block was learned, which says who may hear of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Learned {
    /// From an action of this page sharing `"page"`: it never leaves the page.
    InPage,
    /// From an action of this page sharing `"tabs"`.
    ForTabs,
    /// From another tab, or stored by an earlier page.
    FromTabs,
}

impl Learned {
    /// Whether an action sharing as `share` hears of it.
    fn heard_by(self, share: Share) -> bool {
        match share {
            Share::None => false,
            Share::Page => self != Learned::FromTabs,
            Share::Tabs => true,
        }
    }

    /// Whether it may be told to other tabs.
    fn for_tabs(self) -> bool {
        self != Learned::InPage
    }
}

/// One block: a scope, when it ends, and where it was learned.
struct Block {
    scope: String,
    until_ms: f64,
    learned: Learned,
}

/// A registered listener: the scope it listens to, how its action shares, and the action's
/// inbox (gone once the action ends).
type Registered = (String, Share, Weak<Inbox>);

/// The blocks and the listeners of this page or worker.
#[derive(Default)]
struct Registry {
    blocks: Vec<Block>,
    listeners: Vec<Registered>,
    channel: Option<Channel>,
}

/// The `BroadcastChannel` to the other tabs, with its message listener.
struct Channel {
    port: BroadcastChannel,
    _on_message: EventListener,
}

/// The channel's name: one per module, whatever the page.
const CHANNEL: &str = "retry-budget:blocks";
/// The start of the `localStorage` key of a block shared with tabs, which the scope follows;
/// its value is the block's end, `until_ms`. One key per scope: two tabs that store blocks of
/// different scopes at once never write over each other's.
const STORED: &str = "retry-budget:block:";

thread_local! {
    /// This page's or worker's blocks and listeners.
    static REGISTRY: RefCell<Registry> = RefCell::default();
}

/// Works on the registry; `None` if it is in use, which the callers treat as "nothing to do"
/// (listeners are only told, outside it, so nothing that runs while it is in use reaches it).
fn with<T>(f: impl FnOnce(&mut Registry) -> T) -> Option<T> {
    REGISTRY.with(|registry| registry.try_borrow_mut().ok().map(|mut r| f(&mut r)))
}

/// The latest end of the blocks of `scope` in force now that an action sharing as `share`
/// hears of, in shared-clock milliseconds.
pub(crate) fn blocked_until(scope: &str, share: Share) -> Option<f64> {
    if share == Share::Tabs {
        restore();
    }
    with(|r| {
        r.forget_ended();
        (r.blocks.iter())
            .filter(|b| b.scope == scope && b.learned.heard_by(share))
            .map(|b| b.until_ms)
            .reduce(f64::max)
    })
    .flatten()
}

/// Tells `inbox` of the blocks of `scope` that others learn, until the action drops it.
pub(crate) fn listen(scope: &str, share: Share, inbox: &Rc<Inbox>) {
    if share == Share::None {
        return;
    }
    with(|r| {
        r.listeners.retain(|(_, _, l)| l.strong_count() > 0);
        r.listeners
            .push((scope.to_owned(), share, Rc::downgrade(inbox)));
        if share == Share::Tabs && r.channel.is_none() {
            r.channel = Channel::open();
        }
    });
}

/// An action's own response blocked `scope` until `until_ms`: tell the other actions that
/// share it (and, with `Tabs`, the other tabs, and the pages that load later).
pub(crate) fn announce(scope: &str, until_ms: f64, share: Share, from: &Rc<Inbox>) {
    let learned = match share {
        Share::None => return,
        Share::Page => Learned::InPage,
        Share::Tabs => Learned::ForTabs,
    };
    let told = with(|r| {
        r.learn(scope, until_ms, learned);
        if learned.for_tabs() {
            r.post(scope, until_ms);
            store(scope, until_ms);
        }
        r.listeners_of(scope, learned, Some(from))
    });
    for inbox in told.unwrap_or_default() {
        inbox.hear(until_ms);
    }
}

/// Every block in force, `(scope, seconds from now)`. A page that asks starts hearing the other
/// tabs (and asks them for the blocks they know), and reads what earlier pages stored.
pub(crate) fn in_force() -> Vec<(String, f64)> {
    restore();
    with(|r| {
        if r.channel.is_none() {
            r.channel = Channel::open();
        }
        r.forget_ended();
        let now = shared_now_ms();
        let mut out: Vec<(String, f64)> = Vec::new();
        for b in &r.blocks {
            let left = (b.until_ms - now) / 1000.0;
            match out.iter_mut().find(|(scope, _)| *scope == b.scope) {
                Some(entry) => entry.1 = entry.1.max(left),
                None => out.push((b.scope.clone(), left)),
            }
        }
        out
    })
    .unwrap_or_default()
}

impl Registry {
    fn forget_ended(&mut self) {
        let now = shared_now_ms();
        self.blocks.retain(|b| b.until_ms > now);
    }

    /// Keeps the latest end per scope and source.
    fn learn(&mut self, scope: &str, until_ms: f64, learned: Learned) {
        self.forget_ended();
        let known = (self.blocks.iter_mut()).find(|b| b.scope == scope && b.learned == learned);
        match known {
            Some(block) => block.until_ms = block.until_ms.max(until_ms),
            None => self.blocks.push(Block {
                scope: scope.to_owned(),
                until_ms,
                learned,
            }),
        }
    }

    /// The live listeners of `scope` that hear a block learned so, but `except`.
    fn listeners_of(
        &mut self,
        scope: &str,
        learned: Learned,
        except: Option<&Rc<Inbox>>,
    ) -> Vec<Rc<Inbox>> {
        self.listeners.retain(|(_, _, l)| l.strong_count() > 0);
        (self.listeners.iter())
            .filter(|(s, share, _)| s == scope && learned.heard_by(*share))
            .filter_map(|(_, _, l)| l.upgrade())
            .filter(|l| !except.is_some_and(|e| Rc::ptr_eq(l, e)))
            .collect()
    }

    /// Tells the other tabs of a block, if the channel is open.
    fn post(&self, scope: &str, until_ms: f64) {
        if let Some(channel) = &self.channel {
            let _ = channel.port.post_message(&message(scope, until_ms));
        }
    }
}

impl Channel {
    /// Opens the channel; `None` where there is no `BroadcastChannel`.
    fn open() -> Option<Channel> {
        if !member(&global(), "BroadcastChannel").is_some_and(|c| c.is_function()) {
            return None;
        }
        let port = BroadcastChannel::new(CHANNEL).ok()?;
        let on_message = EventListener::new(&port, "message", |event| {
            let data = event.unchecked_ref::<MessageEvent>().data();
            if member(&data, "ask").is_some() {
                return answer_tabs();
            }
            let scope = member(&data, "scope").and_then(|o| o.as_string());
            let until = member(&data, "until_ms").and_then(|u| u.as_f64());
            if let (Some(scope), Some(until_ms)) = (scope, until.filter(|u| u.is_finite())) {
                heard_from_tabs(&scope, until_ms);
            }
        });
        // In Node an open channel keeps the process alive: a page's channel must not.
        if has_method(&port, "unref") {
            let unref = member(&port, "unref").map(JsCast::unchecked_into::<js_sys::Function>);
            let _ = unref.map(|f| f.call0(&port));
        }
        // A tab that opens late asks the others for the blocks they know.
        let ask = Object::new();
        set(&ask, "ask", &JsValue::TRUE);
        let _ = port.post_message(&ask);
        Some(Channel {
            port,
            _on_message: on_message,
        })
    }
}

/// Another tab asked for the blocks in force: each that may leave this page goes out (a block
/// learned with `share: "page"` never does).
fn answer_tabs() {
    with(|r| {
        r.forget_ended();
        for block in r.blocks.iter().filter(|b| b.learned.for_tabs()) {
            r.post(&block.scope, block.until_ms);
        }
    });
}

/// Another tab announced a block of `scope`. Only news is passed on: a block no later than
/// one this page knows of for the scope (what it announced itself, coming back in another
/// tab's answer to a third tab's question) has already reached every running action that
/// hears it.
fn heard_from_tabs(scope: &str, until_ms: f64) {
    let told = with(|r| {
        // An ended block that is no earlier makes this one past too: not news either way.
        let known = (r.blocks.iter())
            .filter(|b| b.scope == scope)
            .any(|b| b.until_ms >= until_ms);
        r.learn(scope, until_ms, Learned::FromTabs);
        if known {
            return Vec::new();
        }
        r.listeners_of(scope, Learned::FromTabs, None)
    });
    for inbox in told.unwrap_or_default() {
        inbox.hear(until_ms);
    }
}

/// `{ scope, until_ms }`.
fn message(scope: &str, until_ms: f64) -> JsValue {
    let object = Object::new();
    set(&object, "scope", &JsValue::from_str(scope));
    set(&object, "until_ms", &JsValue::from_f64(until_ms));
    object.into()
}

/// The origin's `localStorage`, where there is one and this page may use it (a worker has none;
/// a sandboxed or private page may refuse it: reading it then throws).
fn storage() -> Option<Storage> {
    member(&global(), "localStorage").and_then(|s| s.dyn_into::<Storage>().ok())
}

/// The stored blocks still in force, `(scope, until_ms)`. An entry that ended, or whose end is
/// not a finite number, is removed from the store.
fn stored(storage: &Storage) -> Vec<(String, f64)> {
    let now = shared_now_ms();
    let mut kept = Vec::new();
    let mut gone = Vec::new();
    for i in 0..storage.length().unwrap_or(0) {
        let Some(key) = storage.key(i).ok().flatten() else {
            continue;
        };
        let Some(scope) = key.strip_prefix(STORED) else {
            continue;
        };
        match end_stored(storage, &key).filter(|u| u.is_finite() && *u > now) {
            Some(until_ms) => kept.push((scope.to_owned(), until_ms)),
            None => gone.push(key),
        }
    }
    // Removed after the walk, which a removal would reorder.
    for key in gone {
        let _ = storage.remove_item(&key);
    }
    kept
}

/// The end stored under `key`, when what is stored there is a number.
fn end_stored(storage: &Storage, key: &str) -> Option<f64> {
    let text = storage.get_item(key).ok().flatten()?;
    JSON::parse(&text).ok()?.as_f64()
}

/// Reads the blocks that earlier pages and other tabs stored, as blocks from tabs: one this page
/// did not know of reaches its running actions that hear the other tabs now, as it would have
/// by the channel. (Another tab stores a block just after it posts it, so a page that reads the
/// store in between learns it here first, and the message that follows is no news.)
fn restore() {
    let Some(storage) = storage() else { return };
    for (scope, until_ms) in stored(&storage) {
        heard_from_tabs(&scope, until_ms);
    }
}

/// Stores a block for the pages that load later, unless one of its scope that ends later is
/// stored already.
fn store(scope: &str, until_ms: f64) {
    let Some(storage) = storage() else { return };
    let key = format!("{STORED}{scope}");
    if end_stored(&storage, &key).is_some_and(|k| k.is_finite() && k >= until_ms) {
        return;
    }
    if let Ok(text) = JSON::stringify(&JsValue::from_f64(until_ms)) {
        let _ = storage.set_item(&key, &String::from(text));
    }
}
