//! Child processes and the local ports they listen on.

use std::process::ExitStatus;

use tokio::process::Child;

/// A child process that is killed when this is dropped; with the processes it started, when
/// it leads a process group of its own.
pub struct Process {
    child: Child,
    /// Whether the child was started as the leader of a new process group (see
    /// [`Process::leading_group`]).
    group: bool,
}

impl Process {
    /// Takes charge of `child`: it is killed when the returned value is dropped.
    pub(crate) fn new(child: Child) -> Process {
        Process {
            child,
            group: false,
        }
    }

    /// Takes charge of `child`, which was started as the leader of a new process group
    /// (`process_group(0)`): the whole group is killed when the returned value is dropped.
    /// A WebDriver server's browser is in its group, and outlives the server otherwise: a test
    /// that panics before it closes its session would leave its browser running.
    pub(crate) fn leading_group(child: Child) -> Process {
        Process { child, group: true }
    }

    /// The child's process id (and its group's, when it leads one), while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// How the process ended, once it has; `None` while it runs.
    pub(crate) fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(group) = self.id().filter(|_| self.group) {
            if let Ok(group) = libc::pid_t::try_from(group) {
                // SAFETY: kill(2) with a negative pid signals that process group; it reads no
                // memory of ours. An error (the group has already gone) is of no concern here.
                unsafe {
                    libc::kill(-group, libc::SIGKILL);
                }
            }
        }
        let _ = self.child.start_kill();
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}
