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
use crate::js::{global, has_method, read_member};

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
    _abort: Option<AbortListener>,
    _hidden: Option<EventListener>,
}

impl Ownership {
    /// Takes ownership of `screen` (ending the action that held it), and listens to `signal`
    /// and to the page being hidden; whichever lets go tells `inbox`. An already aborted
    /// `signal` has let go before this returns, and takes no screen: an action that never
    /// begins does not end the one that holds it. So has a signal that cannot be read or
    /// listened to (a hostile `Proxy`): an abort the action could not hear would be lost.
    pub(crate) fn claim(
        screen: Option<String>,
        signal: Option<&AbortSignal>,
        inbox: &Rc<Inbox>,
    ) -> Ownership {
        let abort = signal.and_then(|signal| {
            let aborted = read_member(signal, "aborted").map(|a| a.and_then(|a| a.as_bool()));
            let listener = AbortListener::new(signal, inbox);
            if aborted != Ok(Some(false)) || listener.is_none() {
                inbox.leave();
            }
            listener
        });
        // A window fires pagehide; a worker or Node has no page to hide (Node's global takes no
        // listeners at all).
        let global = global();
        let hidden = has_method(&global, "addEventListener").then(|| {
            let inbox = Rc::clone(inbox);
            EventListener::new(global.unchecked_ref(), "pagehide", move |_| inbox.leave())
        });
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
            _abort: abort,
            _hidden: hidden,
        }
    }
}

/// Tells an inbox that the screen let go when the caller's signal fires `abort`, until
/// dropped. The signal is the caller's object, so adding and removing the listener catch what
/// it throws (gloo-events, which the page's own `pagehide` listener uses, throws it on).
struct AbortListener {
    signal: AbortSignal,
    on_abort: Closure<dyn FnMut(&web_sys::Event)>,
}

impl AbortListener {
    /// Listens to `signal` for `inbox`; `None` if the signal refuses the listener.
    fn new(signal: &AbortSignal, inbox: &Rc<Inbox>) -> Option<AbortListener> {
        let inbox = Rc::clone(inbox);
        let on_abort = Closure::<dyn FnMut(&web_sys::Event)>::new(move |_: &_| inbox.leave());
        signal
            .add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref())
            .ok()?;
        Some(AbortListener {
            signal: signal.clone(),
            on_abort,
        })
    }
}

impl Drop for AbortListener {
    fn drop(&mut self) {
        let callback = self.on_abort.as_ref().unchecked_ref();
        // A signal that refuses to let go of the listener keeps a function whose closure is
        // gone: called, it throws in the signal's dispatch, never into this module.
        let _ = self
            .signal
            .remove_event_listener_with_callback("abort", callback);
    }
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
