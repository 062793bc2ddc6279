//! No import circle inside the core (issue 10, item 5): the top-level modules of
//! `shared/core/src` (a file `x.rs` or a directory `x/`) and the `crate::` paths each one names
//! form an acyclic graph, and the vocabulary (`model/`) names only the other vocabulary. A
//! circle is how "a rule imports the state, which imports the rule" creeps back in: this test
//! names the modules that close one.
//!
//! It reads the source as text: every `crate::x` (in `use` lines and in paths inside the code,
//! tests included, since test code is compiled too), with `crate::{a, b}` groups and the crate
//! root's re-exports (`crate::Plan` stands for `plan`) resolved. Comments are skipped: a doc
//! link is not an import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// What `model/` may name: names and numbers with no rules behind them.
const VOCABULARY: [&str; 3] = ["ids", "text", "duration"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments (line, doc and block comments). Strings, raw strings
/// and character literals are kept as they are: a `//` inside one (an `s3://` URL) is no comment.
fn code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        match (at(i), at(i + 1)) {
            ('/', '/') => {
                while i < chars.len() && at(i) != '\n' {
                    i += 1;
                }
                continue;
            }
            ('/', '*') => {
                i += 2;
                while i < chars.len() && !(at(i) == '*' && at(i + 1) == '/') {
                    i += 1;
                }
                i += 2;
                continue;
            }
            ('r', '"' | '#') if !at(i.wrapping_sub(1)).is_ascii_alphanumeric() => {
                let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                if at(i + 1 + hashes) != '"' {
                    i += 1;
                } else {
                    i += 2 + hashes;
                    while i < chars.len()
                        && !(at(i) == '"' && (1..=hashes).all(|h| at(i + h) == '#'))
                    {
                        i += 1;
                    }
                    i += 1 + hashes;
                }
            }
            ('"', _) => {
                i += 1;
                while i < chars.len() && at(i) != '"' {
                    i += if at(i) == '\\' { 2 } else { 1 };
                }
                i += 1;
            }
            ('\'', '\\') => {
                i += 3;
                while i < chars.len() && at(i) != '\'' {
                    i += 1;
                }
                i += 1;
            }
            ('\'', _) if at(i + 2) == '\'' => i += 3,
            _ => i += 1,
        }
        out.extend(&chars[start..i.min(chars.len())]);
    }
    out
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first segment after every `crate::` in `code`, with `crate::{a::X, b}` giving `a` and `b`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let preceded_by_ident = code[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
        if preceded_by_ident {
            continue;
        }
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => return true,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    false
                })
                .map_or(group.len(), |(end, _)| end);
            let mut depth = 0;
            let mut item_start = true;
            for (j, c) in group[..end].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        out.push(identifier(&group[j..]).to_owned());
                    }
                    _ => {}
                }
            }
        } else {
            out.push(identifier(rest).to_owned());
        }
    }
    out
}

/// `pub use module::{A, B};` and `pub use module::A;` lines of lib.rs: name -> module.
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let lib = code(lib);
    for statement in lib.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = identifier(path).to_owned();
        let names = path[module.len()..].trim_start_matches("::");
        let names = names.trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let name = name.trim();
            let name = name.rsplit(" as ").next().unwrap_or(name).trim();
            if !name.is_empty() {
                out.insert(name.to_owned(), module.clone());
            }
        }
    }
    out
}

/// The core's top-level modules and what each names.
fn core_graph() -> Graph {
    let src = src();
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let reexports = root_reexports(&lib);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src");
        let first = relative
            .components()
            .next()
            .expect("a path")
            .as_os_str()
            .to_string_lossy()
            .into_owned();
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable source");
        let deps = graph.entry(module.clone()).or_default();
        for name in crate_paths(&code(&text)) {
            let target = reexports.get(&name).cloned().unwrap_or(name);
            if target != module {
                deps.insert(target);
            }
        }
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for (module, deps) in &graph {
        for dep in deps {
            assert!(
                modules.contains(dep),
                "{module} names crate::{dep}, which is neither a module of src/ nor a root \
                 re-export: the scan is out of step with the code"
            );
        }
    }
    graph
}

/// A circle of `graph`, as the modules along it (first = last), if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[test]
fn the_core_modules_import_each_other_without_a_circle() {
    let graph = core_graph();
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "import circle in shared/core/src: {}. Move what both sides need into a module \
             below them (the vocabulary goes to model/).",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_vocabulary_names_only_the_vocabulary() {
    let graph = core_graph();
    let model = graph.get("model").expect("shared/core/src/model/ exists");
    let beyond: Vec<&String> = model
        .iter()
        .filter(|dep| !VOCABULARY.contains(&dep.as_str()))
        .collect();
    assert!(
        beyond.is_empty(),
        "model/ names {beyond:?}: the vocabulary may name only {VOCABULARY:?}, so that every \
         rule can import it"
    );
}

/// The scan sees what the compiler sees: known imports are found, and it would find a circle.
#[test]
fn the_scan_finds_known_imports_and_would_report_a_circle() {
    let graph = core_graph();
    assert!(
        graph.len() > 20,
        "too few modules found: {:?}",
        graph.keys()
    );
    let names = |m: &str| graph.get(m).cloned().unwrap_or_default();
    assert!(
        names("reconcile").contains("decide"),
        "{:?}",
        names("reconcile")
    );
    assert!(names("decide").contains("model"), "{:?}", names("decide"));
    // `crate::Plan` in review.rs's tests stands for the plan module.
    assert!(names("review").contains("plan"), "{:?}", names("review"));

    assert_eq!(
        crate_paths("use crate::{a::X, b, c::{D, e::F}};\nlet x = crate::d::f();\nmy_crate::g"),
        ["a", "b", "c", "d"]
    );
    let source = r##"// crate::a
let s = "s3://x"; crate::b::c(); /* crate::d */
let q = '"'; let e = '\''; let r = r#"a "quoted" // not a comment"#; crate::e::f();"##;
    assert_eq!(crate_paths(&code(source)), ["b", "e"]);

    let mut circle = graph.clone();
    circle
        .entry("model".to_owned())
        .or_default()
        .insert("state".to_owned());
    let found = find_cycle(&circle).expect("state -> model -> state is a circle");
    assert!(
        found.contains(&"model".to_owned()) && found.contains(&"state".to_owned()),
        "{found:?}"
    );
}
