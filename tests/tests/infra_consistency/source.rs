//! Reading Rust source well enough to find AWS SDK calls, the adapter types a function builds and
//! the environment variables it reads. Not a parser: a lexer that blanks comments and literal
//! contents (keeping byte offsets), brace matching, and top-level items (`impl`, `fn`, inline
//! `mod`). Test-only code (`#[cfg(test)]` items and modules) is blanked too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One source file, with comments and the contents of string and char literals blanked.
#[derive(Debug, Clone)]
pub struct Masked {
    pub path: PathBuf,
    /// Same length and offsets as the original; only ASCII outside literals survives.
    pub code: String,
    /// String literals: (offset of the opening quote, raw contents).
    pub strings: Vec<(usize, String)>,
    /// Modules declared `#[cfg(test)] mod name;` (their files hold test-only code).
    pub test_modules: Vec<String>,
}

impl Masked {
    pub fn read(path: &Path) -> Self {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        Self::from_text(path, &text)
    }

    pub fn from_text(path: &Path, text: &str) -> Self {
        let (code, strings) = mask(text);
        let mut masked = Self {
            path: path.to_owned(),
            code,
            strings,
            test_modules: Vec::new(),
        };
        masked.blank_test_items();
        masked
    }

    /// String literals that start inside `range`.
    pub fn strings_in(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = &str> {
        self.strings
            .iter()
            .filter(move |(at, _)| range.contains(at))
            .map(|(_, s)| s.as_str())
    }

    /// Blanks every item under `#[cfg(test)]` and notes `#[cfg(test)] mod x;` declarations.
    fn blank_test_items(&mut self) {
        let mut bytes = self.code.clone().into_bytes();
        let mut from = 0;
        while let Some(found) = self.code[from..].find("#[cfg(test)]") {
            let attr = from + found;
            let mut i = attr + "#[cfg(test)]".len();
            // The item ends at its first `;` (declaration) or at the brace matching its first `{`.
            let end = loop {
                match bytes.get(i) {
                    None => break bytes.len(),
                    Some(b';') => break i + 1,
                    Some(b'{') => break matching_brace(&bytes, i).map_or(bytes.len(), |e| e + 1),
                    Some(_) => i += 1,
                }
            };
            let item = String::from_utf8_lossy(&bytes[attr..end]).into_owned();
            let words: Vec<&str> = item
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .collect();
            if item.trim_end().ends_with(';') {
                if let Some(pos) = words.iter().position(|w| *w == "mod") {
                    if let Some(name) = words.get(pos + 1) {
                        self.test_modules.push((*name).to_owned());
                    }
                }
            }
            for b in &mut bytes[attr..end] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
            from = end.min(bytes.len());
            self.code = String::from_utf8(bytes.clone()).expect("masking keeps ASCII");
        }
        self.code = String::from_utf8(bytes).expect("masking keeps ASCII");
    }
}

/// Blanks comments and literal contents. Non-ASCII bytes are blanked everywhere, so the result is
/// ASCII with the original byte offsets.
fn mask(text: &str) -> (String, Vec<(usize, String)>) {
    let src = text.as_bytes();
    let mut out: Vec<u8> = src
        .iter()
        .map(|&b| if b.is_ascii() { b } else { b' ' })
        .collect();
    let mut strings = Vec::new();
    let blank = |out: &mut Vec<u8>, range: std::ops::Range<usize>| {
        for b in &mut out[range] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < src.len() {
        let b = src[i];
        let next = src.get(i + 1).copied();
        if b == b'/' && next == Some(b'/') {
            let end = src[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(src.len(), |p| i + p);
            blank(&mut out, i..end);
            i = end;
        } else if b == b'/' && next == Some(b'*') {
            let mut depth = 0;
            let mut j = i;
            while j < src.len() {
                if src[j] == b'/' && src.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    j += 2;
                } else if src[j] == b'*' && src.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i..j);
            i = j;
        } else if b == b'r'
            && (next == Some(b'"') || next == Some(b'#'))
            && !ident_byte(src.get(i.wrapping_sub(1)).copied())
        {
            // Raw string r"..." or r#"..."#.
            let hashes = src[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let open = i + 1 + hashes;
            if src.get(open) != Some(&b'"') {
                i += 1;
                continue;
            }
            let closing: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body_start = open + 1;
            let body_end = find(src, &closing, body_start).unwrap_or(src.len());
            strings.push((
                open,
                String::from_utf8_lossy(&src[body_start..body_end]).into_owned(),
            ));
            blank(&mut out, body_start..body_end);
            i = (body_end + closing.len()).min(src.len());
        } else if b == b'"' {
            let mut j = i + 1;
            while j < src.len() && src[j] != b'"' {
                j += if src[j] == b'\\' { 2 } else { 1 };
            }
            let end = j.min(src.len());
            strings.push((i, String::from_utf8_lossy(&src[i + 1..end]).into_owned()));
            blank(&mut out, i + 1..end);
            i = end + 1;
        } else if b == b'\'' {
            // A char literal ('x', '\n', '\u{..}', or one multi-byte char) or a lifetime ('a).
            if next == Some(b'\\') {
                let end = src[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(src.len(), |p| i + 2 + p);
                blank(&mut out, i + 1..end);
                i = end + 1;
            } else {
                let ch_len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                if src.get(i + 1 + ch_len) == Some(&b'\'') {
                    blank(&mut out, i + 1..i + 1 + ch_len);
                    i += 2 + ch_len;
                } else {
                    i += 1;
                }
            }
        } else {
            i += 1;
        }
    }
    (
        String::from_utf8(out).expect("masking keeps ASCII"),
        strings,
    )
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

fn ident_byte(b: Option<u8>) -> bool {
    b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The index of the `}` matching the `{` at `open`.
fn matching_brace(code: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in code.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Occurrences of `word` as a whole identifier.
pub fn word_positions<'a>(code: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let bytes = code.as_bytes();
    code.match_indices(word)
        .map(|(at, _)| at)
        .filter(move |&at| {
            !ident_byte(at.checked_sub(1).map(|p| bytes[p]))
                && !ident_byte(bytes.get(at + word.len()).copied())
        })
}

pub fn has_word(code: &str, word: &str) -> bool {
    word_positions(code, word).next().is_some()
}

/// A top-level item with a body: `impl ... for Type { }`, `impl Type { }` or `fn name() { }`
/// (inline `mod x { }` blocks count as top level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Impl {
        ty: String,
        body: std::ops::Range<usize>,
    },
    Fn {
        name: String,
        body: std::ops::Range<usize>,
    },
}

impl Item {
    pub fn body(&self) -> std::ops::Range<usize> {
        match self {
            Item::Impl { body, .. } | Item::Fn { body, .. } => body.clone(),
        }
    }
}

pub fn top_level_items(m: &Masked) -> Vec<Item> {
    let code = m.code.as_bytes();
    let mut items = Vec::new();
    let mut i = 0;
    // Start of the current item's header (after the previous `;`, `{` of a mod, or `}`).
    let mut header_start = 0;
    while i < code.len() {
        match code[i] {
            b';' | b'}' => {
                header_start = i + 1;
                i += 1;
            }
            b'{' => {
                let header = &m.code[header_start..i];
                let words: Vec<&str> = header
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty())
                    .collect();
                let end = matching_brace(code, i).unwrap_or(code.len() - 1);
                if words.contains(&"mod") && !words.contains(&"fn") && !words.contains(&"impl") {
                    // An inline module: its items are top-level items too.
                    header_start = i + 1;
                    i += 1;
                    continue;
                }
                if let Some(ty) = impl_type(header) {
                    items.push(Item::Impl {
                        ty,
                        body: i..end + 1,
                    });
                } else if let Some(pos) = words.iter().position(|w| *w == "fn") {
                    if let Some(name) = words.get(pos + 1) {
                        items.push(Item::Fn {
                            name: (*name).to_owned(),
                            body: i..end + 1,
                        });
                    }
                }
                header_start = end + 1;
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    items
}

/// The implementing type of an `impl` header, without path or generics.
fn impl_type(header: &str) -> Option<String> {
    let start = word_positions(header, "impl").next()?;
    let mut rest = header[start + 4..].trim_start();
    if rest.starts_with('<') {
        rest = skip_generics(rest);
    }
    if let Some(for_at) = word_positions(rest, "for").next() {
        rest = &rest[for_at + 3..];
    }
    let rest = rest.trim_start().trim_start_matches('&').trim_start();
    let path: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    path.rsplit("::")
        .next()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn skip_generics(s: &str) -> &str {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return &s[i + 1..];
                }
            }
            _ => {}
        }
    }
    ""
}

/// The AWS SDK crates headroom uses, with the IAM service prefix of each.
pub const SDK_SERVICES: &[(&str, &str, &str)] = &[
    // (crate name, Rust path, IAM service prefix)
    (
        "aws-sdk-applicationautoscaling",
        "aws_sdk_applicationautoscaling",
        "application-autoscaling",
    ),
    ("aws-sdk-dynamodb", "aws_sdk_dynamodb", "dynamodb"),
    ("aws-sdk-sagemaker", "aws_sdk_sagemaker", "sagemaker"),
    ("aws-sdk-cloudwatch", "aws_sdk_cloudwatch", "cloudwatch"),
];

/// Every operation of an SDK client: the SDK generates one file per operation under
/// `src/client/`, named after its fluent method (`describe_endpoint.rs`).
pub type SdkOperations = BTreeMap<&'static str, BTreeSet<String>>;

pub fn sdk_operations(root: &Path) -> SdkOperations {
    let lock =
        std::fs::read_to_string(root.join("Cargo.lock")).expect("Cargo.lock at the workspace root");
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME or CARGO_HOME")).join(".cargo")
        });
    let registry = cargo_home.join("registry").join("src");
    let mut out = SdkOperations::new();
    for &(krate, _, iam) in SDK_SERVICES {
        let version =
            locked_version(&lock, krate).unwrap_or_else(|| panic!("{krate} is not in Cargo.lock"));
        let dir = std::fs::read_dir(&registry)
            .unwrap_or_else(|e| {
                panic!(
                    "cannot list {}: {e} (build the workspace first)",
                    registry.display()
                )
            })
            .filter_map(Result::ok)
            .map(|index| {
                index
                    .path()
                    .join(format!("{krate}-{version}"))
                    .join("src")
                    .join("client")
            })
            .find(|p| p.is_dir())
            .unwrap_or_else(|| {
                panic!(
                    "the source of {krate} {version} is not under {}",
                    registry.display()
                )
            });
        let ops: BTreeSet<String> = std::fs::read_dir(&dir)
            .expect("SDK client directory")
            .filter_map(Result::ok)
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_suffix(".rs"))
                    .map(str::to_owned)
            })
            .filter(|n| n != "customize")
            .collect();
        assert!(
            ops.len() > 5,
            "{} lists too few operations: the SDK layout changed",
            dir.display()
        );
        out.insert(iam, ops);
    }
    out
}

fn locked_version(lock: &str, krate: &str) -> Option<String> {
    let marker = format!("name = \"{krate}\"\nversion = \"");
    let at = lock.find(&marker)? + marker.len();
    lock[at..].split('"').next().map(str::to_owned)
}

/// `describe_scalable_targets` -> `DescribeScalableTargets`.
pub fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut c = part.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// An SDK call found in a file: `service:Operation` at an offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdkCall {
    pub action: String,
    pub at: usize,
}

/// Method calls `.op(` whose name is an operation of an SDK client this file imports, made on
/// something other than `self` (a port method may share an operation's name).
pub fn sdk_calls(m: &Masked, sdk: &SdkOperations) -> Result<Vec<SdkCall>, String> {
    let imported: Vec<&str> = SDK_SERVICES
        .iter()
        .filter(|(_, path, _)| has_word(&m.code, path))
        .map(|(_, _, iam)| *iam)
        .collect();
    let mut calls = Vec::new();
    let mut i = 0;
    while let Some(p) = m.code[i..].find('.') {
        let dot = i + p;
        i = dot + 1;
        let name: String = m.code[dot + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let after = m.code[dot + 1 + name.len()..].trim_start();
        if !after.starts_with('(') && !after.starts_with("::<") {
            continue;
        }
        let services: Vec<&str> = imported
            .iter()
            .copied()
            .filter(|iam| sdk[iam].contains(&name))
            .collect();
        if services.is_empty() {
            continue;
        }
        // The receiver: the identifier just before the dot (whitespace and newlines skipped).
        let before = m.code[..dot].trim_end();
        let receiver: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        if receiver == "self" {
            continue;
        }
        match services.as_slice() {
            [one] => calls.push(SdkCall {
                action: format!("{one}:{}", pascal(&name)),
                at: dot,
            }),
            many => {
                return Err(format!(
                    "{}: `.{name}(` is an operation of several SDK clients this file imports ({}): keep one AWS service per adapter file",
                    m.path.display(),
                    many.join(", ")
                ))
            }
        }
    }
    Ok(calls)
}

/// The AWS operations each adapter type (and each free function) of the adapters crate calls,
/// following calls from an impl into the file's free functions.
#[derive(Debug, Default, Clone)]
pub struct AdapterScan {
    /// Adapter type -> `service:Operation`s.
    pub types: BTreeMap<String, BTreeSet<String>>,
    /// Free functions that call AWS themselves -> their operations.
    pub free_fns: BTreeMap<String, BTreeSet<String>>,
    pub problems: Vec<String>,
}

pub fn scan_adapters(files: &[Masked], sdk: &SdkOperations) -> AdapterScan {
    let mut scan = AdapterScan::default();
    for m in files {
        let calls = match sdk_calls(m, sdk) {
            Ok(c) => c,
            Err(problem) => {
                scan.problems.push(problem);
                continue;
            }
        };
        let items = top_level_items(m);
        let mut direct: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for call in &calls {
            match items.iter().position(|item| item.body().contains(&call.at)) {
                Some(index) => {
                    direct.entry(index).or_default().insert(call.action.clone());
                }
                None => scan.problems.push(format!(
                    "{}: an AWS call ({}) outside any impl block or function",
                    m.path.display(),
                    call.action
                )),
            }
        }
        // The free functions each item calls (`name(`, not `.name(`).
        let fn_names: Vec<&str> = items
            .iter()
            .filter_map(|i| match i {
                Item::Fn { name, .. } => Some(name.as_str()),
                Item::Impl { .. } => None,
            })
            .collect();
        let callees = |item: &Item| -> Vec<&str> {
            let body = item.body();
            let code = &m.code[body.clone()];
            fn_names
                .iter()
                .copied()
                .filter(|f| {
                    word_positions(code, f).any(|at| {
                        let before = code[..at].trim_end();
                        !before.ends_with('.')
                            && !before.ends_with("fn")
                            && code[at + f.len()..].trim_start().starts_with('(')
                    })
                })
                .collect()
        };
        // Totals per free function, to a fixed point (sets only grow, so this ends).
        let mut total: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        loop {
            let mut changed = false;
            for (index, item) in items.iter().enumerate() {
                if let Item::Fn { name, .. } = item {
                    let mut ops = direct.get(&index).cloned().unwrap_or_default();
                    for callee in callees(item) {
                        ops.extend(total.get(callee).cloned().unwrap_or_default());
                    }
                    let entry = total.entry(name.as_str()).or_default();
                    let before = entry.len();
                    entry.extend(ops);
                    changed |= entry.len() != before;
                }
            }
            if !changed {
                break;
            }
        }
        for (index, item) in items.iter().enumerate() {
            match item {
                Item::Impl { ty, .. } => {
                    let mut ops = direct.get(&index).cloned().unwrap_or_default();
                    for callee in callees(item) {
                        ops.extend(total.get(callee).cloned().unwrap_or_default());
                    }
                    if !ops.is_empty() {
                        scan.types.entry(ty.clone()).or_default().extend(ops);
                    }
                }
                Item::Fn { name, .. } => {
                    if let Some(ops) = total.get(name.as_str()).filter(|o| !o.is_empty()) {
                        scan.free_fns
                            .entry(name.clone())
                            .or_default()
                            .extend(ops.iter().cloned());
                    }
                }
            }
        }
    }
    scan
}

/// The `.rs` files under `dir`, recursively, without the test-only modules they declare.
pub fn rust_files(dir: &Path) -> Vec<Masked> {
    let mut paths = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", d.display()))
            .filter_map(Result::ok)
        {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                paths.push(p);
            }
        }
    }
    paths.sort();
    let files: Vec<Masked> = paths.iter().map(|p| Masked::read(p)).collect();
    let test_only: BTreeSet<String> = files
        .iter()
        .flat_map(|m| m.test_modules.iter().cloned())
        .collect();
    files
        .into_iter()
        .filter(|m| {
            let stem = m
                .path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            let parent = m
                .path
                .parent()
                .and_then(|p| p.file_name())
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            !(test_only.contains(stem) || (stem == "mod" && test_only.contains(parent)))
        })
        .collect()
}

/// Environment variables named by the code: literal arguments of `env::var`/`var_os`, string
/// constants named `ENV_*` or `*_ENV`, and `RUST_LOG` when a tracing `EnvFilter` reads it.
pub fn env_vars(files: &[Masked]) -> BTreeSet<String> {
    let mut vars = BTreeSet::new();
    for m in files {
        let code = &m.code;
        for call in ["var", "var_os"] {
            for at in word_positions(code, call) {
                let before = code[..at].trim_end();
                let after = code[at + call.len()..].trim_start();
                if before.ends_with("env::") && after.starts_with('(') {
                    let open = code.len() - after.len();
                    if let Some(lit) = m
                        .strings
                        .iter()
                        .find(|(p, _)| *p > open && code[open + 1..*p].trim().is_empty())
                    {
                        vars.insert(lit.1.clone());
                    }
                }
            }
        }
        for at in word_positions(code, "const") {
            let decl = &code[at..];
            let name: String = decl[5..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !(name.starts_with("ENV_") || name.ends_with("_ENV")) {
                continue;
            }
            let Some(semi) = decl.find(';') else { continue };
            if let Some(lit) = m.strings_in(at..at + semi).next() {
                vars.insert(lit.to_owned());
            }
        }
        if has_word(code, "from_default_env") || has_word(code, "try_from_default_env") {
            vars.insert("RUST_LOG".to_owned());
        }
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> Masked {
        Masked::from_text(Path::new("x.rs"), text)
    }

    #[test]
    fn comments_and_literals_are_blanked_with_offsets_kept() {
        let text = "let a = \"{ // }\"; // a { comment\nlet c = '{'; /* { */ let r = r#\"}\"#;";
        let m = masked(text);
        assert_eq!(m.code.len(), text.len());
        assert_eq!(m.code.matches('{').count(), 0, "{}", m.code);
        assert_eq!(m.code.matches('}').count(), 0, "{}", m.code);
        assert_eq!(
            m.strings.iter().map(|s| s.1.as_str()).collect::<Vec<_>>(),
            ["{ // }", "}"]
        );
    }

    #[test]
    fn impl_types_and_test_modules() {
        let m = masked(
            "impl<'a> Foo<'a> { fn a() {} }\nimpl Port for crate::x::Bar { }\nfn free() { }\n#[cfg(test)]\nmod tests { impl Baz {} }\n#[cfg(test)]\nmod support;\n",
        );
        let names: Vec<String> = top_level_items(&m)
            .into_iter()
            .map(|i| match i {
                Item::Impl { ty, .. } => ty,
                Item::Fn { name, .. } => format!("fn {name}"),
            })
            .collect();
        assert_eq!(names, ["Foo", "Bar", "fn free"]);
        assert_eq!(m.test_modules, ["support"]);
    }

    #[test]
    fn pascal_case() {
        assert_eq!(
            pascal("describe_scalable_targets"),
            "DescribeScalableTargets"
        );
        assert_eq!(pascal("batch_get_item"), "BatchGetItem");
    }
}
