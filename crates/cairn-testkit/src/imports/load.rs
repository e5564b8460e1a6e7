//! Reading a crate's module tree from its files: `mod` declarations (with `#[path]`), inline
//! modules, the names each module defines and imports, and every path its code writes.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, ImplItem, Item, ItemMod, ItemUse, Macro, Meta, Token, UseTree};

/// One module of the crate, inline or in its own file.
#[derive(Debug, Default)]
pub(super) struct Module {
    pub parent: Option<usize>,
    /// The file holding the module, relative to `src`.
    pub file: PathBuf,
    pub children: HashMap<String, usize>,
    /// Names of the items the module defines itself (types, functions, constants...).
    pub items: HashSet<String>,
    /// Names brought in by `use`, with the path they stand for (read in this module).
    pub imports: HashMap<String, Vec<String>>,
    /// Paths of `use ...::*` in this module.
    pub globs: Vec<Vec<String>>,
}

/// A path written in a module's code.
#[derive(Debug)]
pub(super) struct Reference {
    pub module: usize,
    pub path: Vec<String>,
    /// Written in code rather than in a `use`.
    pub in_code: bool,
}

/// Every module of a crate and every path its code writes.
#[derive(Debug, Default)]
pub(super) struct Tree {
    pub modules: Vec<Module>,
    pub references: Vec<Reference>,
    pub files: Vec<PathBuf>,
}

/// A file still to read: the module it holds and where its `mod` declarations look.
struct Pending {
    file: PathBuf,
    scope: Scope,
}

/// Where a module's `mod x;` declarations look: `dir` for `#[path]`, `children` for the rest.
#[derive(Clone)]
struct Scope {
    module: usize,
    dir: PathBuf,
    children: PathBuf,
}

/// Reads the crate whose sources are in `src`: `lib.rs`, `main.rs` and `bin/*.rs` are roots.
pub(super) fn load(src: &Path, tests: bool) -> Result<Tree, String> {
    let mut tree = Tree::default();
    let mut pending = Vec::new();
    for root in roots(src)? {
        let module = tree.add(None, &root, String::new());
        let dir = root.parent().map(Path::to_path_buf).unwrap_or_default();
        let scope = Scope {
            module,
            children: dir.clone(),
            dir,
        };
        pending.push(Pending { file: root, scope });
    }
    while let Some(next) = pending.pop() {
        let text = std::fs::read_to_string(src.join(&next.file))
            .map_err(|e| format!("cannot read {}: {e}", src.join(&next.file).display()))?;
        let file = syn::parse_file(&text)
            .map_err(|e| format!("cannot parse {}: {e}", src.join(&next.file).display()))?;
        tree.files.push(next.file.clone());
        let mut reader = Reader {
            src,
            tests,
            tree: &mut tree,
            file: next.file,
            scopes: vec![next.scope],
            pending: &mut pending,
            error: None,
        };
        reader.items(&file.items);
        if let Some(error) = reader.error {
            return Err(error);
        }
    }
    tree.files.sort();
    tree.files.dedup();
    Ok(tree)
}

/// The crate roots under `src`, relative to it.
fn roots(src: &Path) -> Result<Vec<PathBuf>, String> {
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(PathBuf::from)
        .filter(|p| src.join(p).is_file())
        .collect();
    if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
        let mut found: Vec<PathBuf> = bins
            .flatten()
            .map(|e| e.path())
            .filter_map(|p| {
                let main = p.join("main.rs");
                let file = if p.is_dir() { main } else { p };
                let rel = file.strip_prefix(src).ok()?.to_path_buf();
                (file.extension().is_some_and(|e| e == "rs") && file.is_file()).then_some(rel)
            })
            .collect();
        found.sort();
        roots.extend(found);
    }
    if roots.is_empty() {
        return Err(format!(
            "{} holds no lib.rs, main.rs or bin/",
            src.display()
        ));
    }
    Ok(roots)
}

impl Tree {
    fn add(&mut self, parent: Option<usize>, file: &Path, name: String) -> usize {
        let id = self.modules.len();
        self.modules.push(Module {
            parent,
            file: file.to_path_buf(),
            ..Module::default()
        });
        if let Some(parent) = parent {
            self.modules[parent].children.insert(name, id);
        }
        id
    }
}

/// Walks one file's syntax, filling the tree.
struct Reader<'a> {
    src: &'a Path,
    tests: bool,
    tree: &'a mut Tree,
    file: PathBuf,
    scopes: Vec<Scope>,
    pending: &'a mut Vec<Pending>,
    error: Option<String>,
}

impl Reader<'_> {
    fn used(&mut self, module: usize, path: Vec<String>) {
        self.tree.references.push(Reference {
            module,
            path,
            in_code: false,
        });
    }

    fn scope(&self) -> &Scope {
        &self.scopes[self.scopes.len() - 1]
    }

    fn module(&mut self) -> &mut Module {
        let id = self.scope().module;
        &mut self.tree.modules[id]
    }

    /// A module's own items: their names are defined in it, `mod` opens a child.
    fn items(&mut self, items: &[Item]) {
        for item in items {
            if !self.tests && test_only(item_attrs(item)) {
                continue;
            }
            if let Some(name) = item_name(item) {
                self.module().items.insert(name);
            }
            match item {
                Item::Mod(m) => self.child(m),
                Item::Use(u) => self.import(u),
                _ => visit::visit_item(self, item),
            }
        }
    }

    fn child(&mut self, m: &ItemMod) {
        let name = m.ident.to_string();
        let parent = self.scope().clone();
        let file = self.file.clone();
        let id = self.tree.add(Some(parent.module), &file, name.clone());
        if let Some((_, items)) = &m.content {
            let dir = parent.children.join(&name);
            self.scopes.push(Scope {
                module: id,
                dir: dir.clone(),
                children: dir,
            });
            self.items(items);
            self.scopes.pop();
            return;
        }
        match self.child_file(&parent, &name, &m.attrs) {
            Some((file, children)) => {
                self.tree.modules[id].file.clone_from(&file);
                self.pending.push(Pending {
                    scope: Scope {
                        module: id,
                        dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
                        children,
                    },
                    file,
                })
            }
            None if m.attrs.iter().any(|a| a.path().is_ident("cfg")) => {}
            None => {
                self.error.get_or_insert(format!(
                    "{} declares `mod {name};` but its file is not there",
                    self.src.join(&self.file).display()
                ));
            }
        }
    }

    /// The file of `mod name;` and where its own children live.
    fn child_file(
        &self,
        at: &Scope,
        name: &str,
        attrs: &[Attribute],
    ) -> Option<(PathBuf, PathBuf)> {
        if let Some(path) = path_attr(attrs) {
            let file = at.dir.join(path);
            let children = file.parent().map(Path::to_path_buf).unwrap_or_default();
            return self.src.join(&file).is_file().then_some((file, children));
        }
        let flat = at.children.join(format!("{name}.rs"));
        let nested = at.children.join(name).join("mod.rs");
        [flat, nested]
            .into_iter()
            .find(|f| self.src.join(f).is_file())
            .map(|f| (f, at.children.join(name)))
    }

    /// A `use`: its names join the module's scope and each path it names is a reference.
    fn import(&mut self, u: &ItemUse) {
        if u.leading_colon.is_some() {
            return;
        }
        let mut leaves = Vec::new();
        flatten(&u.tree, &mut Vec::new(), &mut leaves);
        let module = self.scope().module;
        for leaf in leaves {
            match leaf {
                Leaf::Name(Some(name), path) => {
                    self.module().imports.entry(name).or_insert(path.clone());
                    self.used(module, path);
                }
                Leaf::Name(None, path) => self.used(module, path),
                Leaf::Glob(path) => {
                    self.module().globs.push(path.clone());
                    self.used(module, path);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    /// Items inside function bodies: a `use` there is counted in the enclosing module.
    fn visit_item(&mut self, item: &'ast Item) {
        if !self.tests && test_only(item_attrs(item)) {
            return;
        }
        match item {
            Item::Use(u) => self.import(u),
            Item::Mod(m) => self.child(m),
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item(&mut self, item: &'ast ImplItem) {
        let attrs: &[Attribute] = match item {
            ImplItem::Const(i) => &i.attrs,
            ImplItem::Fn(i) => &i.attrs,
            ImplItem::Type(i) => &i.attrs,
            ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if self.tests || !test_only(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            let path_ = path.segments.iter().map(|s| s.ident.to_string()).collect();
            let module = self.scope().module;
            self.tree.references.push(Reference {
                module,
                path: path_,
                in_code: true,
            });
        }
        visit::visit_path(self, path);
    }

    /// The macro's own path, and its body when it reads as expressions or statements.
    fn visit_macro(&mut self, mac: &'ast Macro) {
        self.visit_path(&mac.path);
        if mac.path.is_ident("macro_rules") {
            return;
        }
        let exprs = Punctuated::<Expr, Token![,]>::parse_terminated;
        if let Ok(exprs) = mac.parse_body_with(exprs) {
            exprs.iter().for_each(|e| self.visit_expr(e));
        } else if let Ok(stmts) = mac.parse_body_with(syn::Block::parse_within) {
            stmts.iter().for_each(|s| self.visit_stmt(s));
        }
    }

    /// `pub(crate)`, `pub(super)` and `pub(in path)` say who may see an item, not what it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    /// Attributes name derive macros, lints and `cfg`s, none of them a module's items.
    fn visit_attribute(&mut self, _: &'ast Attribute) {}
}

/// One name of a `use` tree: what it binds (`None` for `as _`) and its full path, or a glob.
enum Leaf {
    Name(Option<String>, Vec<String>),
    Glob(Vec<String>),
}

fn flatten(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<Leaf>) {
    let bound = |prefix: &Vec<String>, name: String| {
        if name == "self" {
            (prefix.last().cloned(), prefix.clone())
        } else {
            let mut path = prefix.clone();
            path.push(name.clone());
            (Some(name), path)
        }
    };
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let (name, path) = bound(prefix, n.ident.to_string());
            out.push(Leaf::Name(name, path));
        }
        UseTree::Rename(r) => {
            let (_, path) = bound(prefix, r.ident.to_string());
            let name = Some(r.rename.to_string()).filter(|n| n != "_");
            out.push(Leaf::Name(name, path));
        }
        UseTree::Glob(_) => out.push(Leaf::Glob(prefix.clone())),
        UseTree::Group(g) => g.items.iter().for_each(|t| flatten(t, prefix, out)),
    }
}

/// The name an item defines in its module's type or value namespace.
fn item_name(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Const(i) => &i.ident,
        Item::Enum(i) => &i.ident,
        Item::Fn(i) => &i.sig.ident,
        Item::Static(i) => &i.ident,
        Item::Struct(i) => &i.ident,
        Item::Trait(i) => &i.ident,
        Item::TraitAlias(i) => &i.ident,
        Item::Type(i) => &i.ident,
        Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Whether the attributes keep an item out of every build but the tests' (`#[test]`,
/// `#[cfg(test)]`, `#[cfg(all(test, ...))]`).
fn test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<Meta>().is_ok_and(|m| needs_test(&m)))
    })
}

/// Whether a `cfg` predicate can only hold when compiling tests.
fn needs_test(meta: &Meta) -> bool {
    let Meta::List(list) = meta else {
        return meta.path().is_ident("test");
    };
    let Ok(inner) = list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) else {
        return false;
    };
    if list.path.is_ident("all") {
        inner.iter().any(needs_test)
    } else if list.path.is_ident("any") {
        !inner.is_empty() && inner.iter().all(needs_test)
    } else {
        false
    }
}

/// The file named by `#[path = "..."]`.
fn path_attr(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}
