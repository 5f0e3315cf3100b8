//! Child processes and the local ports they listen on.

use std::process::ExitStatus;

use tokio::process::Child;

/// A child process that is killed when this is dropped.
pub struct Process(Child);

impl Process {
    /// Takes charge of `child`: it is killed when the returned value is dropped.
    pub(crate) fn new(child: Child) -> Process {
        Process(child)
    }

    /// How the process ended, once it has; `None` while it runs.
    pub(crate) fn exit_status(&mut self) -> Option<ExitStatus> {
        self.0.try_wait().ok().flatten()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}
