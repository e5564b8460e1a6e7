//! Resolving a path written in a module to the module it lands in, following `use`
//! imports, re-exports and globs the way the compiler's name lookup does.

use std::collections::HashSet;

use super::load::{Reference, Tree};

/// How many imports one lookup may follow before giving up (a chain of re-exports, or
/// globs that import each other).
const MAX_HOPS: usize = 16;

/// What a name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    /// A module of this crate.
    Module(usize),
    /// An item (type, function, variant...) defined in this module.
    Item(usize),
    /// Something from another crate, a generic parameter, a local variable...
    Elsewhere,
}

impl Tree {
    /// The module of this crate a path written in a module lands in: the module it names,
    /// or the one defining the item it names. `None` for paths into other crates and for
    /// names no module defines (local variables, generic parameters, the prelude).
    pub(super) fn land(&self, reference: &Reference) -> Option<usize> {
        match self.resolve(reference.module, &reference.path, 0)? {
            // A lone name in code is a value or a type, never a module: a local variable
            // may share a module's name.
            Found::Module(_) if reference.in_code && reference.path.len() == 1 => None,
            Found::Module(m) | Found::Item(m) => Some(m),
            Found::Elsewhere => None,
        }
    }

    fn resolve(&self, scope: usize, path: &[String], hops: usize) -> Option<Found> {
        let (first, rest) = path.split_first()?;
        if hops > MAX_HOPS {
            return None;
        }
        let start = match first.as_str() {
            "crate" => Found::Module(self.root(scope)),
            "self" => Found::Module(scope),
            "super" => Found::Module(self.modules[scope].parent?),
            "Self" => return None,
            name => self.lookup(scope, name, hops, &mut HashSet::new())?,
        };
        rest.iter().try_fold(start, |at, name| match at {
            Found::Module(m) if name == "super" => self.modules[m].parent.map(Found::Module),
            Found::Module(m) => Some(self.member(m, name, hops)),
            // Past an item (`Type::method`, `Enum::Variant`) the path stays in its module.
            item => Some(item),
        })
    }

    /// `name` in module `m`, reached by a path through it: a name `m` does not know is
    /// taken to come from its glob import, when it has one, or to be defined in `m`
    /// (by a macro, say).
    fn member(&self, m: usize, name: &str, hops: usize) -> Found {
        if let Some(found) = self.lookup(m, name, hops, &mut HashSet::new()) {
            return found;
        }
        let globbed =
            self.modules[m]
                .globs
                .iter()
                .find_map(|glob| match self.resolve(m, glob, hops + 1) {
                    Some(Found::Module(g)) => Some(Found::Item(g)),
                    _ => None,
                });
        globbed.unwrap_or(Found::Item(m))
    }

    /// What `name` stands for in module `m`'s scope: a child module, an item defined
    /// there, a `use` import, or a name a glob import brings in. `None` when unknown.
    fn lookup(
        &self,
        m: usize,
        name: &str,
        hops: usize,
        seen: &mut HashSet<usize>,
    ) -> Option<Found> {
        if hops > MAX_HOPS || !seen.insert(m) {
            return None;
        }
        let module = &self.modules[m];
        if let Some(&child) = module.children.get(name) {
            return Some(Found::Module(child));
        }
        if module.items.contains(name) {
            return Some(Found::Item(m));
        }
        if let Some(path) = module.imports.get(name) {
            return Some(self.resolve(m, path, hops + 1).unwrap_or(Found::Elsewhere));
        }
        module
            .globs
            .iter()
            .find_map(|glob| match self.resolve(m, glob, hops + 1) {
                Some(Found::Module(g)) => self.lookup(g, name, hops + 1, seen),
                _ => None,
            })
    }

    fn root(&self, mut m: usize) -> usize {
        while let Some(parent) = self.modules[m].parent {
            m = parent;
        }
        m
    }
}
