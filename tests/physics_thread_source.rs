//! The physics thread's own code (the step loop and the operations it carries out) makes no
//! text: its refusals are `OperationError` variants with ids and numbers, and the text is
//! made on the caller's thread. This reads those sources and names any line that formats,
//! logs or builds a string, so a change that adds one fails here, not in a profile.
use std::path::Path;

const PHYSICS_THREAD_SOURCES: [&str; 2] = [
    "crates/core/src/sim/physics.rs",
    "crates/core/src/sim/operations.rs",
];
const TEXT_MAKERS: [&str; 10] = [
    "format!",
    "format_args!",
    "write!",
    "writeln!",
    "print!",
    "println!",
    "log::",
    ".to_string()",
    "String::",
    ".to_owned()",
];

#[test]
fn the_physics_thread_formats_no_text() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for file in PHYSICS_THREAD_SOURCES {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        // Unit tests at the end of a file run elsewhere.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (number, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or_default();
            for maker in TEXT_MAKERS {
                if line.contains(maker) {
                    found.push(format!(
                        "{file}:{}: {maker} in `{}`",
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "text made on the physics thread:\n{}",
        found.join("\n")
    );
}
