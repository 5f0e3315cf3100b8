//! When the screen stops owning an action: the caller's `AbortSignal`, the page being hidden
//! (`pagehide`, which also covers a page going into the back/forward cache), or a newer action
//! for the same screen. Any of them ends the action for good.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gloo_events::EventListener;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use retry_budget_model::scenario::Node;

use crate::js::{global, Js};

/// A one-way switch: once set, it stays set, and its one listener is told, once. The screen
/// letting go is one.
#[derive(Default)]
pub(crate) struct Flag {
    set: Cell<bool>,
    listener: Cell<Option<Box<dyn FnOnce()>>>,
}

impl Flag {
    /// Sets the switch and tells the listener, the first time.
    pub(crate) fn set(&self) {
        if !self.set.replace(true) {
            if let Some(listener) = self.listener.take() {
                listener();
            }
        }
    }

    /// Whether the switch is set.
    pub(crate) fn is_set(&self) -> bool {
        self.set.get()
    }

    /// Calls `listener` when the switch is set (never, if it already is).
    pub(crate) fn on_set(&self, listener: Box<dyn FnOnce()>) {
        if !self.is_set() {
            self.listener.set(Some(listener));
        }
    }
}

/// Sets `flag` when `target` fires `kind`, until dropped.
fn listen(target: &JsValue, kind: &'static str, flag: &Rc<Flag>) -> EventListener {
    let flag = Rc::clone(flag);
    EventListener::new(target.unchecked_ref(), kind, move |_| flag.set())
}

thread_local! {
    /// The action that owns each named screen.
    static SCREENS: RefCell<Vec<(String, Rc<Flag>)>> = const { RefCell::new(Vec::new()) };
}

/// Works on the screens' owners; `None` while they are in use (a flag's callback that claims
/// or gives up a screen), which the callers treat as "nothing to do".
fn with_screens<T>(f: impl FnOnce(&mut Vec<(String, Rc<Flag>)>) -> T) -> Option<T> {
    SCREENS.with(|screens| screens.try_borrow_mut().ok().map(|mut s| f(&mut s)))
}

/// Everything that can make one action's screen let go. Dropping it removes its listeners and
/// gives up its screen, so an ended action leaves nothing behind.
pub(crate) struct Ownership {
    /// Set when the screen lets go.
    pub(crate) leave: Rc<Flag>,
    screen: Option<String>,
    _listeners: Vec<EventListener>,
}

impl Ownership {
    /// Takes ownership of `screen` (ending the action that held it), and listens to `signal`
    /// and to the page being hidden.
    pub(crate) fn claim(screen: Option<String>, signal: Option<&AbortSignal>) -> Ownership {
        let leave = Rc::new(Flag::default());
        let mut listeners = Vec::with_capacity(2);
        if let Some(signal) = signal {
            if signal.aborted() {
                leave.set();
            }
            listeners.push(listen(signal, "abort", &leave));
        }
        // A window fires pagehide; a worker or Node has no page to hide (Node's global takes no
        // listeners at all).
        let global = global();
        if Js(global.clone())
            .member("addEventListener")
            .is_some_and(|f| f.0.is_function())
        {
            listeners.push(listen(&global, "pagehide", &leave));
        }
        if let Some(name) = &screen {
            let previous = with_screens(|screens| {
                if let Some(slot) = screens.iter_mut().find(|(key, _)| key == name) {
                    Some(std::mem::replace(&mut slot.1, Rc::clone(&leave)))
                } else {
                    screens.push((name.clone(), Rc::clone(&leave)));
                    None
                }
            });
            // The action that held the screen ends now, outside the registry's borrow.
            if let Some(previous) = previous.flatten() {
                previous.set();
            }
        }
        Ownership {
            leave,
            screen,
            _listeners: listeners,
        }
    }
}

impl Drop for Ownership {
    fn drop(&mut self) {
        if let Some(name) = &self.screen {
            with_screens(|screens| {
                screens.retain(|(key, owner)| key != name || !Rc::ptr_eq(owner, &self.leave));
            });
        }
    }
}

/// How many screens are owned right now (for tests of cleanup).
pub(crate) fn owned_screens() -> usize {
    with_screens(|screens| screens.len()).unwrap_or(0)
}
