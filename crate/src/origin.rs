//! What the service said to an origin: the blocks in force ("no request to this origin before
//! T"), shared by every action of this page or worker on that origin, and with `share: "tabs"`
//! by every other tab and worker of this page's origin through a `BroadcastChannel`.
//!
//! Times are milliseconds on a clock comparable across documents, `performance.timeOrigin +
//! performance.now()`, never the wall clock. Blocks that have ended are forgotten at every
//! look, and a listener of an action that ended is dropped with it: nothing grows without bound.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use gloo_events::EventListener;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{BroadcastChannel, MessageEvent};

use crate::clock::shared_now_ms;
use crate::inbox::Inbox;
use crate::js::{global, Js};
use retry_budget_model::scenario::Node;

/// Who hears of an action's blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Share {
    /// Nobody: the action neither tells nor hears.
    None,
    /// Every action of this page or worker on the same origin (the default).
    Page,
    /// Also every other tab and worker of this page's origin that runs the module.
    Tabs,
}

/// A registered listener: the origin it listens to, how its action shares, and the action's
/// inbox (gone once the action ends).
type Registered = (String, Share, Weak<Inbox>);

/// One block: an origin, when it ends, and whether it came from another tab.
struct Block {
    origin: String,
    until_ms: f64,
    from_tabs: bool,
}

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
const CHANNEL: &str = "retry-budget:origin-blocks";

thread_local! {
    /// This page's or worker's blocks and listeners.
    static REGISTRY: RefCell<Registry> = RefCell::default();
}

/// Works on the registry; `None` if it is in use, which the callers treat as "nothing to do"
/// (listeners are only told, outside it, so nothing that runs while it is in use reaches it).
fn with<T>(f: impl FnOnce(&mut Registry) -> T) -> Option<T> {
    REGISTRY.with(|registry| registry.try_borrow_mut().ok().map(|mut r| f(&mut r)))
}

/// The latest end of the blocks of `origin` in force now that an action sharing as `share`
/// hears of, in shared-clock milliseconds.
pub(crate) fn blocked_until(origin: &str, share: Share) -> Option<f64> {
    if share == Share::None {
        return None;
    }
    with(|r| {
        r.forget_ended();
        r.blocks
            .iter()
            .filter(|b| b.origin == origin && (share == Share::Tabs || !b.from_tabs))
            .map(|b| b.until_ms)
            .reduce(f64::max)
    })
    .flatten()
}

/// Tells `inbox` of the blocks of `origin` that others learn, until the action drops it.
pub(crate) fn listen(origin: &str, share: Share, inbox: &Rc<Inbox>) {
    if share == Share::None {
        return;
    }
    with(|r| {
        r.listeners.retain(|(_, _, l)| l.strong_count() > 0);
        r.listeners
            .push((origin.to_owned(), share, Rc::downgrade(inbox)));
        if share == Share::Tabs && r.channel.is_none() {
            r.channel = Channel::open();
        }
    });
}

/// An action's own response blocked `origin` until `until_ms`: tell the other actions that
/// share it (and, with `Tabs`, the other tabs).
pub(crate) fn announce(origin: &str, until_ms: f64, share: Share, from: &Rc<Inbox>) {
    if share == Share::None {
        return;
    }
    let told = with(|r| {
        r.learn(origin, until_ms, false);
        if share == Share::Tabs {
            if let Some(channel) = &r.channel {
                let _ = channel.port.post_message(&message(origin, until_ms));
            }
        }
        r.listeners_of(origin, false, Some(from))
    });
    for inbox in told.unwrap_or_default() {
        inbox.hear(until_ms);
    }
}

/// Every block in force: `[{ origin, until_s }]`, `until_s` in seconds from now. A page that
/// asks starts hearing the other tabs (and asks them for the blocks they know).
pub(crate) fn in_force() -> Vec<(String, f64)> {
    with(|r| {
        if r.channel.is_none() {
            r.channel = Channel::open();
        }
        r.forget_ended();
        let now = shared_now_ms();
        let mut out: Vec<(String, f64)> = Vec::new();
        for b in &r.blocks {
            let left = (b.until_ms - now) / 1000.0;
            match out.iter_mut().find(|(o, _)| *o == b.origin) {
                Some(entry) => entry.1 = entry.1.max(left),
                None => out.push((b.origin.clone(), left)),
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

    /// Keeps the latest end per origin and source.
    fn learn(&mut self, origin: &str, until_ms: f64, from_tabs: bool) {
        self.forget_ended();
        match self
            .blocks
            .iter_mut()
            .find(|b| b.origin == origin && b.from_tabs == from_tabs)
        {
            Some(block) => block.until_ms = block.until_ms.max(until_ms),
            None => self.blocks.push(Block {
                origin: origin.to_owned(),
                until_ms,
                from_tabs,
            }),
        }
    }

    /// The live listeners of `origin` (those sharing with tabs only, for a block from another
    /// tab), but `except`.
    fn listeners_of(
        &mut self,
        origin: &str,
        from_tabs: bool,
        except: Option<&Rc<Inbox>>,
    ) -> Vec<Rc<Inbox>> {
        self.listeners.retain(|(_, _, l)| l.strong_count() > 0);
        self.listeners
            .iter()
            .filter(|(o, share, _)| o == origin && (!from_tabs || *share == Share::Tabs))
            .filter_map(|(_, _, l)| l.upgrade())
            .filter(|l| !except.is_some_and(|e| Rc::ptr_eq(l, e)))
            .collect()
    }
}

impl Channel {
    /// Opens the channel; `None` where there is no `BroadcastChannel`.
    fn open() -> Option<Channel> {
        let has = Js(global())
            .member("BroadcastChannel")
            .is_some_and(|c| c.0.is_function());
        if !has {
            return None;
        }
        let port = BroadcastChannel::new(CHANNEL).ok()?;
        let on_message = EventListener::new(&port, "message", |event| {
            let data = Js(event.unchecked_ref::<MessageEvent>().data());
            if data.member("ask").is_some() {
                return answer_tabs();
            }
            let origin = data.member("origin").and_then(|o| o.string());
            let until = data.member("until_ms").and_then(|u| u.float());
            if let (Some(origin), Some(until_ms)) = (origin, until.filter(|u| u.is_finite())) {
                heard_from_tabs(&origin, until_ms);
            }
        });
        // In Node an open channel keeps the process alive: a page's channel must not.
        if let Some(unref) = Js(JsValue::clone(&port)).member("unref") {
            if unref.0.is_function() {
                let unref = unref.0.unchecked_into::<js_sys::Function>();
                let _ = unref.call1(&port, &JsValue::UNDEFINED);
            }
        }
        // A tab that opens late asks the others for the blocks they know.
        let ask = js_sys::Object::new();
        crate::js::set(&ask, "ask", &JsValue::TRUE);
        let _ = port.post_message(&ask);
        Some(Channel {
            port,
            _on_message: on_message,
        })
    }
}

/// Another tab asked for the blocks in force: each learned here (from this page's actions or
/// from tabs) goes out as an announcement.
fn answer_tabs() {
    with(|r| {
        r.forget_ended();
        if let Some(channel) = &r.channel {
            for block in &r.blocks {
                let _ = channel
                    .port
                    .post_message(&message(&block.origin, block.until_ms));
            }
        }
    });
}

/// Another tab announced a block of `origin`.
fn heard_from_tabs(origin: &str, until_ms: f64) {
    let told = with(|r| {
        r.learn(origin, until_ms, true);
        r.listeners_of(origin, true, None)
    });
    for inbox in told.unwrap_or_default() {
        inbox.hear(until_ms);
    }
}

/// `{ origin, until_ms }`.
fn message(origin: &str, until_ms: f64) -> JsValue {
    let object = js_sys::Object::new();
    crate::js::set(&object, "origin", &JsValue::from_str(origin));
    crate::js::set(&object, "until_ms", &JsValue::from_f64(until_ms));
    object.into()
}
