//! When the screen stops owning an action: the caller's `AbortSignal`, the page being left
//! (`pagehide`, which also covers a page going into the back/forward cache), or a newer action
//! for the same screen. Any of them ends the action for good.

use std::cell::RefCell;
use std::rc::Rc;

use gloo_events::EventListener;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use crate::inbox::Inbox;
use crate::js::{global, has_method};

thread_local! {
    /// The action that owns each named screen, by its inbox.
    static SCREENS: RefCell<Vec<(String, Rc<Inbox>)>> = const { RefCell::new(Vec::new()) };
}

/// Works on the screens' owners; `None` if they are in use, which the callers treat as
/// "nothing to do" (nothing that runs while they are in use claims a screen).
fn with_screens<T>(f: impl FnOnce(&mut Vec<(String, Rc<Inbox>)>) -> T) -> Option<T> {
    SCREENS.with(|screens| screens.try_borrow_mut().ok().map(|mut s| f(&mut s)))
}

/// Everything that can make one action's screen let go. Dropping it removes its listeners and
/// gives up its screen, so an ended action leaves nothing behind.
pub(crate) struct Ownership {
    inbox: Rc<Inbox>,
    screen: Option<String>,
    _listeners: Vec<EventListener>,
}

impl Ownership {
    /// Takes ownership of `screen` (ending the action that held it), and listens to `signal`
    /// and to the page being hidden; whichever lets go tells `inbox`. An already aborted
    /// `signal` has let go before this returns, and takes no screen: an action that never
    /// begins does not end the one that holds it.
    pub(crate) fn claim(
        screen: Option<String>,
        signal: Option<&AbortSignal>,
        inbox: &Rc<Inbox>,
    ) -> Ownership {
        let mut listeners = Vec::with_capacity(2);
        if let Some(signal) = signal {
            if signal.aborted() {
                inbox.leave();
            }
            listeners.push(leave_on(signal, "abort", inbox));
        }
        // A window fires pagehide; a worker or Node has no page to hide (Node's global takes no
        // listeners at all).
        let global = global();
        if has_method(&global, "addEventListener") {
            listeners.push(leave_on(&global, "pagehide", inbox));
        }
        let screen = screen.filter(|_| !inbox.has_left());
        if let Some(name) = &screen {
            let previous =
                with_screens(
                    |screens| match screens.iter_mut().find(|(key, _)| key == name) {
                        Some(slot) => Some(std::mem::replace(&mut slot.1, Rc::clone(inbox))),
                        None => {
                            screens.push((name.clone(), Rc::clone(inbox)));
                            None
                        }
                    },
                );
            if let Some(previous) = previous.flatten() {
                previous.leave();
            }
        }
        Ownership {
            inbox: Rc::clone(inbox),
            screen,
            _listeners: listeners,
        }
    }
}

/// Tells `inbox` that the screen let go when `target` fires `kind`, until dropped.
fn leave_on(target: &JsValue, kind: &'static str, inbox: &Rc<Inbox>) -> EventListener {
    let inbox = Rc::clone(inbox);
    EventListener::new(target.unchecked_ref(), kind, move |_| inbox.leave())
}

impl Drop for Ownership {
    fn drop(&mut self) {
        if let Some(name) = &self.screen {
            with_screens(|screens| {
                screens.retain(|(key, owner)| key != name || !Rc::ptr_eq(owner, &self.inbox));
            });
        }
    }
}

/// How many screens are owned right now (for tests of cleanup).
pub(crate) fn owned_screens() -> usize {
    with_screens(|screens| screens.len()).unwrap_or(0)
}
