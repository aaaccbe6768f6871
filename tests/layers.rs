//! The module graph of `src`: no two modules import each other, directly or around a
//! circle, and the lower layers (config, model, sim, world and what they use) never import
//! an adapter (ros, zmq, render, viewer). This reads the sources: every `crate::`, `super::`
//! and `self::` path outside unit tests is an edge from the file's module to the deepest
//! module the path names. A module reaching its own ancestors (`super::Error`) is how a
//! folder shares its definitions, not a circle.
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// The layers below the adapters, and the adapters.
const LOWER: [&str; 11] = [
    "config",
    "model",
    "sim",
    "world",
    "control",
    "record",
    "error",
    "census",
    "rate_limit",
    "logging",
    "supervise",
];
const ADAPTERS: [&str; 4] = ["ros", "zmq", "render", "viewer"];

fn sources(folder: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The module a file defines (`src/ros/outputs/mod.rs`: ros::outputs; lib.rs: the root).
fn module_of(src: &Path, file: &Path) -> Module {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    parts
}

/// The deepest module of `modules` that `path` (split at `::`) names from `current`.
fn resolve(modules: &BTreeSet<Module>, current: &Module, path: &[&str]) -> Option<Module> {
    let (mut module, rest): (Module, &[&str]) = match *path.first()? {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (current.clone(), &path[1..]),
        "super" => {
            let mut module = current.clone();
            let mut rest = path;
            while rest.first() == Some(&"super") {
                module.pop();
                rest = &rest[1..];
            }
            (module, rest)
        }
        _ => return None,
    };
    let mut deepest = modules.contains(&module).then(|| module.clone());
    for segment in rest {
        module.push(segment.to_string());
        if !modules.contains(&module) {
            break;
        }
        deepest = Some(module.clone());
    }
    deepest
}

/// Every module's imports of other modules (ancestors left out).
fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(&src, f)).collect();
    let path =
        Regex::new(r"\b(?:crate|super|self)(?:::(?:super|[A-Za-z_][A-Za-z0-9_]*))+").unwrap();
    let group =
        Regex::new(r"\buse\s+((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\}")
            .unwrap();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests at the end of a file are not part of the module's dependencies.
        let code = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        let code: String = code
            .lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        let mut named: Vec<Vec<String>> = path
            .find_iter(&code)
            .map(|m| m.as_str().split("::").map(str::to_string).collect())
            .collect();
        // `use crate::a::{b, c::d}`: the base with the first segment of each item.
        for grouped in group.captures_iter(&code) {
            let base: Vec<String> = grouped[1].split("::").map(str::to_string).collect();
            for item in grouped[2].split([',', ' ', '\n', '{', '}']) {
                if let Some(first) = item.split("::").next().filter(|s| !s.is_empty()) {
                    let mut full = base.clone();
                    full.push(first.to_string());
                    named.push(full);
                }
            }
        }
        let imports = edges.entry(module.clone()).or_default();
        for path in named {
            let segments: Vec<&str> = path.iter().map(String::as_str).collect();
            if let Some(target) = resolve(&modules, &module, &segments)
                && !module.starts_with(&target)
            {
                imports.insert(target);
            }
        }
    }
    edges
}

fn name(module: &Module) -> String {
    if module.is_empty() {
        "crate".into()
    } else {
        module.join("::")
    }
}

/// The strongly connected groups of more than one module (Tarjan's algorithm).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    struct Search<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<Module, usize>,
        low: BTreeMap<Module, usize>,
        stack: Vec<Module>,
        found: Vec<Vec<String>>,
    }
    impl Search<'_> {
        fn visit(&mut self, module: &Module) {
            let number = self.index.len();
            self.index.insert(module.clone(), number);
            self.low.insert(module.clone(), number);
            self.stack.push(module.clone());
            for next in self.edges.get(module).into_iter().flatten() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[module].min(self.low[next]);
                    self.low.insert(module.clone(), low);
                } else if self.stack.contains(next) {
                    let low = self.low[module].min(self.index[next]);
                    self.low.insert(module.clone(), low);
                }
            }
            if self.low[module] == self.index[module] {
                let mut group = Vec::new();
                while let Some(member) = self.stack.pop() {
                    let done = &member == module;
                    group.push(name(&member));
                    if done {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    self.found.push(group);
                }
            }
        }
    }
    let mut search = Search {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for module in edges.keys() {
        if !search.index.contains_key(module) {
            search.visit(module);
        }
    }
    search.found
}

#[test]
fn no_modules_import_each_other_around_a_circle() {
    let edges = graph();
    assert!(
        edges.len() > 50,
        "the sources were read ({} modules)",
        edges.len()
    );
    let found = circles(&edges);
    assert!(
        found.is_empty(),
        "modules that import each other: {found:?}"
    );
    // The summary (`cargo test --test layers -- --nocapture`): what each top-level module
    // imports of the others.
    let imports: usize = edges.values().map(|targets| targets.len()).sum();
    println!("{} modules, {imports} imports, no circle", edges.len());
    let mut tops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, targets) in &edges {
        let top = module.first().cloned().unwrap_or_else(|| "crate".into());
        let entry = tops.entry(top.clone()).or_default();
        for target in targets {
            if let Some(other) = target.first().filter(|other| **other != top) {
                entry.insert(other.clone());
            }
        }
    }
    for (top, others) in tops {
        let others: Vec<&str> = others.iter().map(String::as_str).collect();
        println!("  {top} -> {}", others.join(", "));
    }
}

#[test]
fn lower_layers_import_no_adapter() {
    let mut upward = Vec::new();
    for (module, imports) in graph() {
        if !module
            .first()
            .is_some_and(|top| LOWER.contains(&top.as_str()))
        {
            continue;
        }
        for target in imports {
            if target
                .first()
                .is_some_and(|top| ADAPTERS.contains(&top.as_str()))
            {
                upward.push(format!("{} -> {}", name(&module), name(&target)));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "lower layers importing adapters: {upward:?}"
    );
}

#[test]
fn a_circle_and_an_upward_import_are_found() {
    // The check itself, on a made-up graph: a -> b -> c -> a, and d alone.
    let module = |name: &str| vec![name.to_string()];
    let mut edges = BTreeMap::new();
    edges.insert(module("a"), BTreeSet::from([module("b")]));
    edges.insert(module("b"), BTreeSet::from([module("c")]));
    edges.insert(module("c"), BTreeSet::from([module("a")]));
    edges.insert(module("d"), BTreeSet::from([module("a")]));
    assert_eq!(circles(&edges), vec![vec!["a", "b", "c"]]);
    // And a path resolves to the deepest module it names.
    let modules: BTreeSet<Module> = [vec![], module("sim"), vec!["sim".into(), "tap".into()]]
        .into_iter()
        .collect();
    let current = vec!["sim".to_string(), "world".to_string()];
    assert_eq!(
        resolve(&modules, &current, &["super", "tap", "Tap"]),
        Some(vec!["sim".to_string(), "tap".to_string()])
    );
    assert_eq!(
        resolve(&modules, &current, &["crate", "sim", "SimHandle"]),
        Some(module("sim"))
    );
}
