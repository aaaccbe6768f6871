//! CPU time of named threads, from /proc: the benchmarks' share of a core per thread kind.

/// CPU seconds so far of the threads of `process` (`self` or a pid) whose names start with
/// one of `names`.
pub fn threads_cpu(process: &str, names: &[&str]) -> f64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{process}/task")) else {
        return 0.0;
    };
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| names.iter().any(|n| name.trim().starts_with(n)))
        })
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .fold(0.0, |total, ns| total + ns) // not sum(): an empty one is -0.0
        * 1e-9
}
