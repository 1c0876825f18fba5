//! Linux signal names for messages such as `killed by signal 9 (SIGKILL)`.

const NAMES: [&str; 32] = [
    "",
    "SIGHUP",
    "SIGINT",
    "SIGQUIT",
    "SIGILL",
    "SIGTRAP",
    "SIGABRT",
    "SIGBUS",
    "SIGFPE",
    "SIGKILL",
    "SIGUSR1",
    "SIGSEGV",
    "SIGUSR2",
    "SIGPIPE",
    "SIGALRM",
    "SIGTERM",
    "SIGSTKFLT",
    "SIGCHLD",
    "SIGCONT",
    "SIGSTOP",
    "SIGTSTP",
    "SIGTTIN",
    "SIGTTOU",
    "SIGURG",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGVTALRM",
    "SIGPROF",
    "SIGWINCH",
    "SIGIO",
    "SIGPWR",
    "SIGSYS",
];

/// The name of signal `n` (`SIGRTMIN+k` for real-time signals).
pub fn signal_name(n: i32) -> String {
    match n {
        1..=31 => NAMES[n as usize].to_string(),
        34..=64 => format!("SIGRTMIN+{}", n - 34),
        _ => format!("signal {n}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names() {
        assert_eq!(super::signal_name(9), "SIGKILL");
        assert_eq!(super::signal_name(11), "SIGSEGV");
        assert_eq!(super::signal_name(35), "SIGRTMIN+1");
    }
}
