//! The server's own fault file (`server/transport-faults.json`): transport behaviours that the
//! scenario format cannot express, because they happen below HTTP or in the browser's CORS
//! checks. Each entry serves a fixture scenario under a new name with a fault on some of its
//! responses; the fixture itself is served unchanged under its own name.
//!
//! The scenario format (and the model's loader, which rejects unknown fields) is not extended:
//! the faults live here, next to the server that injects them.

use std::path::Path;

use serde::Deserialize;

/// One transport fault, applied to one scripted response of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// The response goes out without `Access-Control-Allow-Origin` (nor
    /// `Access-Control-Expose-Headers`): a cross-origin page cannot read it, and its fetch
    /// rejects with a network error.
    OmitCors,
    /// `Access-Control-Allow-Origin: *` but no `Access-Control-Expose-Headers`: cross-origin,
    /// `Retry-After` and `Date` read as absent.
    OmitExpose,
    /// Status, headers and a first piece of the body as scripted, then a space every 200 ms,
    /// forever: the body never finishes.
    EndlessBody,
    /// After the scripted duration the connection is reset (TCP RST) before any byte of the
    /// response. A browser may resend a GET whose reused keep-alive connection is reset before
    /// any byte (RFC 9110 section 9.2.2 allows it for idempotent requests; Chromium does): a
    /// request of the same run within [`RESEND_WINDOW`] of the reset is taken for that resend,
    /// logged as `reset_resend`, reset too, and takes no scripted response.
    Reset,
    /// Status, headers and a first piece of the body go out after the scripted duration, then
    /// the connection is reset (TCP RST): a browser cannot resend a request whose response had
    /// begun.
    ResetMidBody,
    /// After the scripted duration, a `302 Found` to the same URL with `redirected=1` added;
    /// the followed request takes the run's next scripted response.
    Redirect,
}

impl Fault {
    /// The name used in the fault file and the log.
    pub const fn as_str(self) -> &'static str {
        match self {
            Fault::OmitCors => "omit_cors",
            Fault::OmitExpose => "omit_expose",
            Fault::EndlessBody => "endless_body",
            Fault::Reset => "reset",
            Fault::ResetMidBody => "reset_mid_body",
            Fault::Redirect => "redirect",
        }
    }

    /// Whether it only shows when the page fetches from another origin.
    pub const fn needs_cross_origin(self) -> bool {
        matches!(self, Fault::OmitCors | Fault::OmitExpose)
    }
}

/// How soon after a `reset` a request of the same run is taken for the browser's own resend of
/// the reset request. A browser resends at once, but on a busy machine "at once" can take a
/// while; no driver's retry can be mistaken for a resend, since a transport error ends the
/// action.
pub const RESEND_WINDOW: std::time::Duration = std::time::Duration::from_secs(1);

/// The fault file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultFile {
    /// Free text for people.
    #[serde(default)]
    pub about: Option<String>,
    /// The faulted scenarios.
    pub faulted: Vec<Faulted>,
}

/// A fixture scenario served under a new name with faults on some of its responses.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Faulted {
    /// The name to serve it under (`scenario=NAME`); unique across all scenarios.
    pub name: String,
    /// The fixture scenario whose policy, durations, statuses, headers and bodies it uses.
    pub base: String,
    /// Free text for people: what the fault shows.
    pub about: String,
    /// The faults, each on one response.
    pub faults: Vec<FaultAt>,
}

/// One fault on the k-th scripted response.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultAt {
    /// Which scripted response (1-based: the run's k-th request gets response k).
    pub attempt: usize,
    /// What happens to it.
    pub fault: Fault,
}

/// Reads the fault file at `path`; every problem names the file and the field.
pub fn read(path: &Path) -> Result<FaultFile, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_reads_by_its_name() {
        for fault in [
            Fault::OmitCors,
            Fault::OmitExpose,
            Fault::EndlessBody,
            Fault::Reset,
            Fault::ResetMidBody,
            Fault::Redirect,
        ] {
            let parsed: Fault =
                serde_json::from_str(&format!("\"{}\"", fault.as_str())).expect("a fault name");
            assert_eq!(parsed, fault);
        }
        assert!(serde_json::from_str::<Fault>("\"hang\"").is_err());
    }

    #[test]
    fn unknown_fields_are_refused() {
        let text = r#"{ "faulted": [ { "name": "x", "base": "y", "about": "", "faults": [],
                        "atempt": 1 } ] }"#;
        let error = serde_json::from_str::<FaultFile>(text).expect_err("a typo is refused");
        assert!(error.to_string().contains("atempt"), "{error}");
    }
}
