//! No module of a workspace crate depends, through other modules, on itself.
//!
//! The graph is read from the sources with `syn`: a node is a module file (`lib.rs` and the
//! files its `mod` declarations reach), an edge is a path in it that names another module of
//! the same crate (`use crate::…`, `super::…`, `self::…`, a module it imported, or such a path
//! inside a macro call); a path through a re-export (`crate::App`, a `mod.rs`'s `pub use`) is an
//! edge to the module that declares the item. A module may use what its ancestors declare (Rust's privacy gives a
//! parent's items to its children: a `mod.rs` holds what its children share), so an edge to an
//! ancestor, the crate root included, does not count. Unit tests (`#[cfg(test)]` items) are not
//! part of the graph.
//! `scripts/test.sh` runs it with the rest of the suite (`cargo test --workspace`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Cycles that are known and being removed elsewhere, as (crate, modules). The check fails
/// when one of them is gone, so that the entry is deleted with it.
const KNOWN_CYCLES: &[(&str, &[&str])] = &[];

/// A module path inside a crate (`["mcp", "server"]`); the root is empty.
type ModPath = Vec<String>;

/// One crate's module files and the edges between them, each with the path that makes it.
#[derive(Default)]
struct Graph {
    files: BTreeMap<ModPath, PathBuf>,
    edges: BTreeMap<ModPath, BTreeMap<ModPath, String>>,
    /// Each module's re-exports (`pub use`): the name it shows, and the path it stands for.
    reexports: BTreeMap<ModPath, HashMap<String, ModPath>>,
}

#[test]
fn no_module_cycle_inside_a_crate() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut found = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(crates)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src/lib.rs").is_file())
        .collect();
    names.sort();
    assert!(
        names.len() >= 5,
        "expected the workspace crates in {}",
        crates.display()
    );
    for dir in names {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let graph = crate_graph(&dir.join("src"));
        assert!(graph.files.len() > 1, "{name}: no module found");
        for cycle in cycles(&graph) {
            let explain = describe(&graph, &cycle, crates.parent().unwrap());
            found.push((name.clone(), cycle, explain));
        }
    }
    let mut problems = Vec::new();
    for (name, cycle, explain) in &found {
        let modules: BTreeSet<String> = cycle.iter().map(|m| m.join("::")).collect();
        let known = KNOWN_CYCLES.iter().any(|(c, ms)| {
            *c == name && ms.iter().map(|m| m.to_string()).collect::<BTreeSet<_>>() == modules
        });
        if !known {
            problems.push(format!("{name}: cycle among {modules:?}\n{explain}"));
        }
    }
    for (c, ms) in KNOWN_CYCLES {
        let gone = !found.iter().any(|(name, cycle, _)| {
            name == c
                && cycle.iter().map(|m| m.join("::")).collect::<BTreeSet<_>>()
                    == ms.iter().map(|m| m.to_string()).collect()
        });
        if gone {
            problems.push(format!(
                "{c}: the known cycle {ms:?} is gone: delete it from KNOWN_CYCLES"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The check itself sees a cycle when there is one, through `use`, `super`, a macro and an
/// imported module.
#[test]
fn module_graph_sees_every_kind_of_edge() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir(src.join("a")).unwrap();
    let files = [
        ("lib.rs", "mod a; mod b; mod c; mod d;"),
        ("a/mod.rs", "mod x; const P: u8 = x::Y;"),
        (
            "a/x.rs",
            "const Y: u8 = super::P; fn f() { super::super::b::g(); }",
        ),
        ("b.rs", "use crate::c; fn g() { c::h(); }"),
        ("c.rs", "fn h() { println!(\"{}\", crate::d::V); }"),
        (
            "d.rs",
            "use crate::{a::x::f as k}; #[cfg(test)] mod tests { use crate::b::g; }",
        ),
    ];
    for (path, text) in files {
        std::fs::write(src.join(path), text).unwrap();
    }
    let graph = crate_graph(src);
    let found = cycles(&graph);
    let expected: Vec<ModPath> = [&["a", "x"][..], &["b"], &["c"], &["d"]]
        .iter()
        .map(|m| m.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(found, vec![expected]);
    std::fs::write(
        src.join("d.rs"),
        "#[cfg(test)] mod tests { use crate::a::x::f; }",
    )
    .unwrap();
    assert!(
        cycles(&crate_graph(src)).is_empty(),
        "a unit test is no edge, nor a use of a parent"
    );
}

/// A path through a re-export (the crate root's `pub use`, a `mod.rs`'s) is an edge to the
/// module that declares the item, so a cycle hidden behind one is seen.
#[test]
fn module_graph_resolves_reexports() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let files = [
        ("lib.rs", "mod app; mod ops; pub use app::App;"),
        ("app.rs", "use crate::ops::Metrics; pub struct App;"),
        ("ops.rs", "use crate::App; pub struct Metrics;"),
    ];
    for (path, text) in files {
        std::fs::write(src.join(path), text).unwrap();
    }
    let expected: Vec<ModPath> = vec![vec!["app".to_string()], vec!["ops".to_string()]];
    assert_eq!(cycles(&crate_graph(src)), vec![expected]);
    std::fs::write(src.join("ops.rs"), "pub struct Metrics;").unwrap();
    assert!(cycles(&crate_graph(src)).is_empty());
}

/// The module graph of the crate whose sources are in `src`.
fn crate_graph(src: &Path) -> Graph {
    let mut graph = Graph::default();
    let mut pending = vec![(ModPath::new(), src.join("lib.rs"))];
    let mut parsed = Vec::new();
    while let Some((module, file)) = pending.pop() {
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // `a.rs` and `a/mod.rs` both hold their children in `a/`; `lib.rs` in `src/`.
        let dir = if module.is_empty() || file.ends_with("mod.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for item in &ast.items {
            if let syn::Item::Mod(m) = item {
                if m.content.is_none() && !is_test(&m.attrs) {
                    let name = m.ident.to_string();
                    let flat = dir.join(format!("{name}.rs"));
                    let child = if flat.is_file() {
                        flat
                    } else {
                        dir.join(&name).join("mod.rs")
                    };
                    let mut path = module.clone();
                    path.push(name);
                    pending.push((path, child));
                }
            }
        }
        graph.files.insert(module.clone(), file);
        parsed.push((module, ast));
    }
    // Re-exports first, so that a path through one (`crate::App`) is an edge to the module
    // that declares the item (`app`), not to the one that re-exports it.
    let mut reexports = BTreeMap::new();
    for (module, ast) in &parsed {
        let mut uses = Uses::new(&graph, module.clone());
        for item in &ast.items {
            if let syn::Item::Use(u) = item {
                if !matches!(u.vis, syn::Visibility::Inherited) && !is_test(&u.attrs) {
                    uses.use_tree(&mut Vec::new(), &u.tree);
                }
            }
        }
        reexports.insert(module.clone(), uses.aliases);
    }
    graph.reexports = reexports;
    for (module, ast) in parsed {
        let mut uses = Uses::new(&graph, module.clone());
        uses.visit_file(&ast);
        let mut paths = Paths { uses };
        paths.visit_file(&ast);
        let edges = paths.uses.edges;
        graph.edges.insert(module, edges);
    }
    graph
}

/// Whether `attrs` hold `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && matches!(&a.meta, syn::Meta::List(l) if l.tokens.to_string() == "test")
    })
}

/// The attributes of an item.
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

/// First pass over a file: its `use` items (edges, and the modules they bring into scope).
struct Uses<'g> {
    graph: &'g Graph,
    /// The module of the file.
    module: ModPath,
    /// The inline modules (`mod m { … }`) the visitor is in.
    inline: Vec<String>,
    /// Names brought into scope by `use`, with the crate path they stand for.
    aliases: HashMap<String, ModPath>,
    edges: BTreeMap<ModPath, String>,
}

impl<'g> Uses<'g> {
    /// A visitor of `module`'s file, with nothing found yet.
    fn new(graph: &'g Graph, module: ModPath) -> Self {
        Uses {
            graph,
            module,
            inline: Vec::new(),
            aliases: HashMap::new(),
            edges: BTreeMap::new(),
        }
    }

    /// The module the visitor is in, inline modules included.
    fn current(&self) -> ModPath {
        let mut m = self.module.clone();
        m.extend(self.inline.iter().cloned());
        m
    }

    /// `segments` as a path from the crate root, when it names something of this crate.
    fn absolute(&self, segments: &[String], aliases: bool) -> Option<ModPath> {
        let (first, rest) = segments.split_first()?;
        let mut base = self.current();
        match first.as_str() {
            "crate" => return Some(rest.to_vec()),
            "self" => {}
            "super" => {
                base.pop()?;
                let mut rest = rest;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                return Some(base);
            }
            _ => {
                if aliases {
                    if let Some(target) = self.aliases.get(first) {
                        let mut path = target.clone();
                        path.extend(rest.iter().cloned());
                        return Some(path);
                    }
                }
                let mut child = base.clone();
                child.push(first.clone());
                if !self.graph.files.contains_key(&child) {
                    return None;
                }
                base.push(first.clone());
            }
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// Records the edge that `segments` makes, if any.
    fn edge(&mut self, segments: &[String], aliases: bool) {
        let Some(mut path) = self.absolute(segments, aliases) else {
            return;
        };
        let module_of = |path: &ModPath| {
            (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| self.graph.files.contains_key(p))
                .unwrap_or_default()
        };
        let mut target = module_of(&path);
        // Through re-exports to the module that declares the item (a bounded walk: a re-export
        // may name another one).
        for _ in 0..8 {
            let Some(real) = path
                .get(target.len())
                .and_then(|name| self.graph.reexports.get(&target).and_then(|r| r.get(name)))
            else {
                break;
            };
            let mut through = real.clone();
            through.extend(path[target.len() + 1..].iter().cloned());
            path = through;
            target = module_of(&path);
        }
        if !self.module.starts_with(&target) {
            self.edges
                .entry(target)
                .or_insert_with(|| segments.join("::"));
        }
    }

    /// Walks a use tree below `prefix`.
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident, &n.ident),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident, &r.rename),
            syn::UseTree::Glob(_) => self.edge(prefix, false),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    /// `use prefix::name as alias`.
    fn use_leaf(&mut self, prefix: &[String], name: &syn::Ident, alias: &syn::Ident) {
        let mut full = prefix.to_vec();
        if name != "self" {
            full.push(name.to_string());
        }
        self.edge(&full, false);
        if let Some(path) = self.absolute(&full, false) {
            let alias = if alias == "self" {
                prefix.last().cloned()
            } else {
                Some(alias.to_string())
            };
            if let Some(alias) = alias {
                self.aliases.insert(alias, path);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.inline.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.inline.pop();
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }
}

/// Second pass: the paths in code, types and macro calls.
struct Paths<'g> {
    uses: Uses<'g>,
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.uses.inline.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.uses.inline.pop();
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            self.uses.edge(&segments, true);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let mut tokens = Vec::new();
        flatten(mac.tokens.clone(), &mut tokens);
        for (i, t) in tokens.iter().enumerate() {
            if !matches!(t.as_str(), "crate" | "super" | "self") {
                continue;
            }
            let mut segments = vec![t.clone()];
            let mut j = i + 1;
            while tokens.get(j).is_some_and(|t| t == "::") && j + 1 < tokens.len() {
                segments.push(tokens[j + 1].clone());
                j += 2;
            }
            if segments.len() > 1 {
                self.uses.edge(&segments, true);
            }
        }
        syn::visit::visit_macro(self, mac);
    }
}

/// The identifiers and `::` of a token stream, groups opened.
fn flatten(stream: proc_macro2::TokenStream, out: &mut Vec<String>) {
    let mut colon = false;
    for tree in stream {
        match tree {
            proc_macro2::TokenTree::Group(g) => flatten(g.stream(), out),
            proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ':' => {
                if colon {
                    out.push("::".into());
                }
                colon = p.spacing() == proc_macro2::Spacing::Joint;
                continue;
            }
            _ => out.push(String::new()),
        }
        colon = false;
    }
}

/// The cycles of `graph`: its strongly connected components of more than one module, each
/// sorted, in order.
fn cycles(graph: &Graph) -> Vec<Vec<ModPath>> {
    // Tarjan's algorithm.
    struct State<'a> {
        graph: &'a Graph,
        index: HashMap<&'a ModPath, usize>,
        low: HashMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.edges.get(v).into_iter().flat_map(|e| e.keys()) {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.files.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found.sort();
    s.found
}

/// The edges inside `cycle`, one a line, with the path that makes each and its file (below
/// `root`).
fn describe(graph: &Graph, cycle: &[ModPath], root: &Path) -> String {
    let mut lines = Vec::new();
    for from in cycle {
        for (to, path) in graph.edges.get(from).into_iter().flatten() {
            if cycle.contains(to) {
                let file = graph.files[from]
                    .strip_prefix(root)
                    .unwrap_or(&graph.files[from]);
                lines.push(format!(
                    "  {} → {} ({path}, in {})",
                    from.join("::"),
                    to.join("::"),
                    file.display()
                ));
            }
        }
    }
    lines.join("\n")
}
