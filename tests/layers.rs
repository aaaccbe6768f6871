//! The layers of the workspace. Its crates are the layers: each depends only on crates of
//! the layers below its own, never on a sibling (the ROS node, the streams, the legacy ZMQ
//! server and the viewer are sibling sinks of the same topics, and none knows another), and
//! the compiler keeps every crate from naming what it does not depend on. Inside each crate,
//! no two modules import each other, directly or around a circle. This reads the sources:
//! every `crate::`, `super::` and `self::` path outside unit tests is an edge from the file's
//! module to the deepest module the path names. A module reaching its own ancestors
//! (`super::Error`) is how a folder shares its definitions, not a circle.
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// The workspace's crates by layer, lowest first (names without `mujoco_bridge_`; the root
/// package is `mujoco_bridge`). A crate may depend on the layers before its own.
const LAYERS: [&[&str]; 5] = [
    &["core", "messages"],
    &["render"],
    &["topics"],
    &["ros", "streams", "zmq", "viewer"],
    &["mujoco_bridge"],
];

/// Each crate of the layers: its manifest's folder, relative to the workspace.
fn folder(name: &str) -> String {
    match name {
        "mujoco_bridge" => ".".into(),
        _ => format!("crates/{name}"),
    }
}

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

/// The module a file defines (`crates/ros/src/publish/mod.rs`: publish; lib.rs: the root).
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

/// Every module's imports of other modules of the same crate (ancestors left out); `src`
/// is the crate's source folder, relative to the workspace.
fn graph(src: &str) -> BTreeMap<Module, BTreeSet<Module>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(src);
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
    for name in LAYERS.iter().flat_map(|layer| layer.iter()) {
        let src = format!("{}/src", folder(name));
        let src = src.as_str();
        let edges = graph(src);
        assert!(
            edges.len() >= 3,
            "the sources of {src} were read ({} modules)",
            edges.len()
        );
        let found = circles(&edges);
        assert!(
            found.is_empty(),
            "modules of {src} that import each other: {found:?}"
        );
        // The summary (`cargo test --test layers -- --nocapture`): what each top-level
        // module imports of the others.
        let imports: usize = edges.values().map(|targets| targets.len()).sum();
        println!(
            "{src}: {} modules, {imports} imports, no circle",
            edges.len()
        );
        for (top, others) in top_level(&edges) {
            let others: Vec<&str> = others.iter().map(String::as_str).collect();
            println!("  {top} -> {}", others.join(", "));
        }
    }
}

/// What each top-level module imports of the others.
fn top_level(edges: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut tops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, targets) in edges {
        let top = module.first().cloned().unwrap_or_else(|| "crate".into());
        let entry = tops.entry(top.clone()).or_default();
        for target in targets {
            if let Some(other) = target.first().filter(|other| **other != top) {
                entry.insert(other.clone());
            }
        }
    }
    tops
}

/// The workspace crates `manifest` (a Cargo.toml's text) depends on, outside its dev- and
/// build-dependencies, by layer name.
fn workspace_dependencies(manifest: &str) -> BTreeSet<String> {
    let mut section = "";
    let mut found = BTreeSet::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[dependencies]"
            && let Some(rest) = line.strip_prefix("mujoco_bridge_")
        {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            found.insert(name);
        }
    }
    found
}

/// The dependencies of `crates` (crate -> what it depends on) that reach a layer not below
/// the dependent's; every crate must have a layer.
fn against_the_layers(crates: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let layer = |name: &str| LAYERS.iter().position(|layer| layer.contains(&name));
    let mut wrong = Vec::new();
    for (name, dependencies) in crates {
        let Some(own) = layer(name) else {
            wrong.push(format!("{name} has no layer"));
            continue;
        };
        for dependency in dependencies {
            match layer(dependency) {
                Some(theirs) if theirs < own => {}
                Some(_) => wrong.push(format!("{name} -> {dependency}")),
                None => wrong.push(format!("{dependency} has no layer")),
            }
        }
    }
    wrong
}

#[test]
fn each_crate_depends_only_on_the_layers_below_its_own() {
    let crates: BTreeMap<String, BTreeSet<String>> = LAYERS
        .iter()
        .flat_map(|layer| layer.iter())
        .map(|name| {
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(folder(name))
                .join("Cargo.toml");
            let text = std::fs::read_to_string(&manifest).unwrap();
            (name.to_string(), workspace_dependencies(&text))
        })
        .collect();
    assert!(
        crates["mujoco_bridge"].contains("ros") && crates["ros"].contains("topics"),
        "{crates:?}"
    );
    // The graph (`cargo test --test layers -- --nocapture`).
    for (name, dependencies) in &crates {
        let dependencies: Vec<&str> = dependencies.iter().map(String::as_str).collect();
        println!("{name} -> {}", dependencies.join(", "));
    }
    let wrong = against_the_layers(&crates);
    assert!(
        wrong.is_empty(),
        "dependencies against the layers: {wrong:?}"
    );
}

#[test]
fn a_circle_and_an_import_against_the_layers_are_found() {
    // The check itself, on a made-up graph: a -> b -> c -> a, and d alone.
    let module = |name: &str| vec![name.to_string()];
    let mut edges = BTreeMap::new();
    edges.insert(module("a"), BTreeSet::from([module("b")]));
    edges.insert(module("b"), BTreeSet::from([module("c")]));
    edges.insert(module("c"), BTreeSet::from([module("a")]));
    edges.insert(module("d"), BTreeSet::from([module("a")]));
    assert_eq!(circles(&edges), vec![vec!["a", "b", "c"]]);
    // Siblings, an upward dependency and a crate with no layer, read from manifests.
    let ros = "[dependencies]\nmujoco_bridge_streams.workspace = true\nmujoco_bridge_topics = { path = \"x\" }\n\n[dev-dependencies]\nmujoco_bridge_viewer.workspace = true\n";
    let topics = "[dependencies]\nmujoco_bridge_ros.workspace = true\n";
    let crates = BTreeMap::from([
        ("ros".to_string(), workspace_dependencies(ros)),
        ("topics".to_string(), workspace_dependencies(topics)),
        ("extra".to_string(), BTreeSet::new()),
    ]);
    assert_eq!(
        crates["ros"],
        BTreeSet::from(["streams".to_string(), "topics".to_string()])
    );
    assert_eq!(
        against_the_layers(&crates),
        ["extra has no layer", "ros -> streams", "topics -> ros"]
    );
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
